// offlinefs-bench: benchmarks that print numbers (not timed tests). Run in release mode.
//
//   offlinefs-bench sync-rss [items]
//       sync a generated RSS feed (default 100,000 items) from a local origin
//   offlinefs-bench transfers --origin http://127.0.0.1:18080/ [--count 8] [--size BYTES]
//                             [--parallel 4] --library DIR [--checksums SHA256SUMS]
//       run through Benchmarks/transfers.sh, which serves the files with nginx and measures
//       curl on the same files and disk in the same run
//   offlinefs-bench first-range --origin http://127.0.0.1:18080/ --library DIR --files a.bin,b.bin [--bytes 131072]
//       time to the first bytes of each uncached file through the engine alone (open, then a
//       first read), in a fresh library; the first file shows the process's one-time costs
//   offlinefs-bench hls [segments=600] [segment-kib=256]
//       download a generated HLS stream from an in-process origin through the engine, then
//       the same segments with curl, sequentially and with the same parallelism
//   offlinefs-bench tree [items=100000] [--plain]
//       what a mount does before it serves: open the store, build the tree (store read and
//       build apart); --plain: no categories or side files, like the bench corpus
//   offlinefs-bench million [--items N] [--folder DIR] [--offlinefs PATH]
//       a paged JSON catalog of N items (default 1,000,000) synced, mounted and listed with
//       the offlinefs program beside this one; one `metric value unit` line per figure
//   offlinefs-bench soak [--minutes 30] [--items 100000] [--sync-seconds 5] [--offlinefs PATH]
//       a mount kept up while items are opened and read, folders listed and syncs asked;
//       the mount's memory, descriptors and threads each minute
//   offlinefs-bench open-read [--items 100000] [--rounds 1] [--offlinefs PATH]
//       opens, reads 4 KiB of and closes every uncached item file once through a mount; the
//       mount's memory, descriptors and threads before and after
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: offlinefs-bench <benchmark> [options]
      sync-rss [items]
      transfers --origin URL --library DIR [--count N] [--size BYTES] [--parallel N] [--checksums FILE]
      first-range --origin URL --library DIR --files NAME,... [--bytes N]
      hls [segments] [segment-kib]
      tree [items] [--plain]
      million [--items N] [--folder DIR] [--offlinefs PATH]
      soak [--minutes M] [--items N] [--sync-seconds S] [--offlinefs PATH]
      open-read [--items N] [--rounds N] [--offlinefs PATH]
    """

do {
    switch arguments.first {
    case "sync-rss":
        let items = arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000
        try SyncBenchmark(items: items).run()
    case "transfers":
        try TransferBenchmark(arguments: Array(arguments.dropFirst())).run()
    case "first-range":
        try FirstRangeBenchmark(arguments: Array(arguments.dropFirst())).run()
    case "hls":
        try HLSBenchmark(arguments: Array(arguments.dropFirst())).run()
    case "tree":
        try TreeBenchmark(arguments: Array(arguments.dropFirst())).run()
    case "soak":
        try SoakBenchmark(arguments: Array(arguments.dropFirst())).run()
    case "open-read":
        try OpenReadBenchmark(arguments: Array(arguments.dropFirst())).run()
    case "million":
        try MillionBenchmark(arguments: Array(arguments.dropFirst())).run()
    default:
        print(usage)
        exit(arguments.isEmpty ? 0 : 2)
    }
} catch {
    FileHandle.standardError.write(Data("offlinefs-bench \(arguments.first ?? ""): \(error)\n".utf8))
    exit(1)
}
