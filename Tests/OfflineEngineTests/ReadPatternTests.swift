import OfflineEngine
import Testing

/// `ReadPattern`: the read-ahead a run of reads earns, by table.
@Suite struct ReadPatternTests {
    /// Reads in turn (offset, length) and the read-ahead each gets.
    static let runs: [(ReaderClass, [(Int64, Int64)], [Int64])] = [
        // In order: nothing for the first, then 256 KiB doubling to the 8 MiB cap
        (ReaderClass.other, [(0, 131_072), (131_072, 131_072), (262_144, 131_072), (393_216, 131_072)], [0, 262_144, 524_288, 1_048_576]),
        // Out of order within 1 MiB (the kernel's parallel reads) still counts as in order
        (.player, [(0, 131_072), (262_144, 131_072), (131_072, 131_072)], [0, 262_144, 524_288]),
        // A jump resets: the read after it proves nothing
        (.other, [(0, 131_072), (131_072, 131_072), (50_000_000, 131_072), (50_131_072, 131_072)], [0, 262_144, 0, 262_144]),
        // Small reads in order earn at most four times what they read (256 KiB at least)
        (.other, (0..<8).map { (Int64($0) * 8_192, Int64(8_192)) }, [0, 262_144, 262_144, 262_144, 262_144, 262_144, 262_144, 262_144]),
        (.other, [(0, 131_072), (131_072, 131_072), (262_144, 131_072), (393_216, 131_072), (524_288, 131_072),
                  (655_360, 131_072)], [0, 262_144, 524_288, 1_048_576, 2_097_152, 3_145_728]),
        // Scanners and probers read pieces: never any
        (.scanner, [(0, 131_072), (131_072, 131_072), (262_144, 131_072)], [0, 0, 0]),
        (.prober, [(0, 131_072), (131_072, 131_072)], [0, 0]),
    ]

    @Test(arguments: runs)
    func readAheadFollowsTheReads(_ reader: ReaderClass, _ reads: [(Int64, Int64)], _ expected: [Int64]) {
        var pattern = ReadPattern(readerClass: reader, size: 100 << 20)
        #expect(reads.map { pattern.read(offset: $0.0, end: $0.0 + $0.1) } == expected)
    }

    /// A sequential reader's read outside its run is a jump (its read-ahead is let go:
    /// `ItemFileReader.leaveReadAhead`), back or forward, within its read-ahead or past it; a
    /// first read, reads in order or within the kernel's reordering, and jumps of a reader
    /// that never proved sequential are not.
    @Test func aSequentialReaderThatLeavesItsRunJumps() {
        var pattern = ReadPattern(readerClass: .player, size: 100 << 20)
        func jumps(_ offset: Int64) -> Bool {
            _ = pattern.read(offset: offset, end: offset + 131_072)
            return pattern.jumped
        }
        #expect(!jumps(0) && !jumps(131_072) && !jumps(262_144) && !jumps(131_072 + 393_216))
        #expect(jumps(3 << 20))  // within its read-ahead's reach, but not its run
        #expect(!jumps((3 << 20) + 131_072))
        #expect(jumps(1 << 20))  // back
        var piecemeal = ReadPattern(readerClass: .player, size: 100 << 20)
        _ = piecemeal.read(offset: 0, end: 4096)
        _ = piecemeal.read(offset: 50 << 20, end: (50 << 20) + 4096)
        #expect(!piecemeal.jumped)
    }

    /// A scanner's or a prober's read that begins where its last ended continues it (its fetch
    /// then streams, so the next such read joins it); anything else does not.
    @Test func aPiecesReaderReadingOnContinues() {
        var pattern = ReadPattern(readerClass: .prober, size: 100 << 20)
        let continued = [(0, 100), (100, 200), (500, 600), (600, 700), (650, 800)].map { (offset: Int64, end: Int64) in
            _ = pattern.read(offset: offset, end: end)
            return pattern.continues
        }
        #expect(continued == [false, true, false, true, false])
    }

    @Test func theCapIsEightMebibytes() {
        var pattern = ReadPattern(readerClass: .copier, size: 1 << 30)
        var offset: Int64 = 0
        var last: Int64 = 0
        for _ in 0..<20 {
            last = pattern.read(offset: offset, end: offset + 131_072)
            offset += 131_072
        }
        #expect(last == ReadPattern.maxReadAhead)
    }

    @Test func prefetchAsksAheadOnceHalfTheReadAheadIsUsedAndStopsAtTheEnd() {
        var pattern = ReadPattern(readerClass: .other, size: 1_000_000)
        _ = pattern.read(offset: 0, end: 100_000)
        let readAhead = pattern.read(offset: 100_000, end: 200_000)  // 256 KiB
        // First: from the read's end, one read-ahead long
        #expect(pattern.prefetch(end: 200_000, readAhead: readAhead) == 200_000..<462_144)
        // Not again while more than half of it is still ahead
        #expect(pattern.prefetch(end: 300_000, readAhead: readAhead) == nil)
        // Within half of it: from where the last ask ended
        #expect(pattern.prefetch(end: 400_000, readAhead: readAhead) == 462_144..<662_144)
        // Cut at the file's end, then nothing more
        #expect(pattern.prefetch(end: 900_000, readAhead: readAhead) == 900_000..<1_000_000)
        #expect(pattern.prefetch(end: 1_000_000, readAhead: readAhead) == nil)
    }

    @Test func noPrefetchWithoutASizeOrAReadAhead() {
        var unknown = ReadPattern(readerClass: .other, size: nil)
        #expect(unknown.prefetch(end: 0, readAhead: 262_144) == nil)
        var known = ReadPattern(readerClass: .other, size: 1_000_000)
        #expect(known.prefetch(end: 0, readAhead: 0) == nil)
    }
}
