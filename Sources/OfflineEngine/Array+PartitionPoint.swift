extension Array {
    /// The index of the first element for which `belongsInSecondPartition` is true, in an
    /// array partitioned by it (binary search; `count` when there is none). Inlinable: the
    /// mount's HLS reads search with it, and a generic call across modules is not specialized.
    @inlinable
    public func partitionPoint(where belongsInSecondPartition: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if belongsInSecondPartition(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
