import Foundation

/// Hands a catalog's pages from the thread that fetches and parses them to the one that
/// merges them, one page at a time: the next page's fetch and parse overlap this page's
/// merge (a sync's two halves, on two cores), and at most one page waits.
final class PageHandoff<Page: Sendable>: @unchecked Sendable {
    // @unchecked: every field below is protected by `condition`.
    private let condition = NSCondition()
    private var waiting: Page?
    /// The producer is done; with `failure`, because it failed.
    private var ended = false
    private var failure: SyncFailure?
    /// The consumer stopped taking (it failed, or it is done).
    private var cancelled = false

    /// Blocks while a page waits. False when the consumer stopped: the producer ends.
    func put(_ page: Page) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waiting != nil && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        waiting = page
        condition.broadcast()
        return true
    }

    /// The producer's end: after the last page, or its failure.
    func finish(_ failure: SyncFailure?) {
        condition.lock()
        ended = true
        self.failure = failure
        condition.broadcast()
        condition.unlock()
    }

    /// The next page; nil after the last. Throws the producer's failure once the pages
    /// before it were taken.
    func take() throws(SyncFailure) -> Page? {
        condition.lock()
        defer { condition.unlock() }
        while waiting == nil && !ended { condition.wait() }
        if let page = waiting {
            waiting = nil
            condition.broadcast()
            return page
        }
        if let failure { throw failure }
        return nil
    }

    /// The consumer takes no more: a blocked or later `put` returns false.
    func cancel() {
        condition.lock()
        cancelled = true
        waiting = nil
        condition.broadcast()
        condition.unlock()
    }
}
