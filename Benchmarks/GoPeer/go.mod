// The comparison peer for `make bench`: Go's standard library only, so no require lines, ever.
module twobits.local/gopeer

go 1.19
