// offlinefs-bench: benchmarks that print numbers (not timed tests).
//
//   offlinefs-bench transfers --origin http://127.0.0.1:18080/ [--count 8] [--size BYTES]
//                             [--parallel 4] --library DIR [--checksums SHA256SUMS]
//
// Run through Benchmarks/transfers.sh, which serves the files with nginx and measures curl
// on the same files and disk in the same run.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "transfers":
    do {
        try TransferBenchmark(arguments: Array(arguments.dropFirst())).run()
    } catch {
        FileHandle.standardError.write(Data("offlinefs-bench transfers: \(error)\n".utf8))
        exit(1)
    }
default:
    print("usage: offlinefs-bench transfers --origin URL --library DIR [--count N] [--size BYTES] [--parallel N] [--checksums FILE]")
    exit(arguments.isEmpty ? 0 : 2)
}
