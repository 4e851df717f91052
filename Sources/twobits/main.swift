import FoundationEssentials
import Glibc

// `twobits <command>`: serve, sandbox, apikey, keys, admin, app-attest.
let arguments = Array(CommandLine.arguments.dropFirst())
let status = await TwoBitsCommand.run(arguments)
exit(status)
