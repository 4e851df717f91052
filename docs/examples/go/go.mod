module example.com/twobits-verify

go 1.19
