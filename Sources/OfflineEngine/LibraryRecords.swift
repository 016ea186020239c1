// The library's plain records, as the engine hands them to its front ends (the mount, the
// CLI): `Library.sources()`, `ItemReference.resolve`, `LibraryView` and the byte source return
// them, `ItemSummary` and `LicenceClock` take them. Each is re-exported by name, so a front
// end that imports only the engine can name these and nothing else of the store or of the
// HTTP binding: `LibraryStore` and the HTTP client stay the engine's.
@_exported import struct OfflineStore.Category
@_exported import struct OfflineStore.Item
@_exported import struct OfflineStore.ItemListing
@_exported import struct OfflineStore.ItemOutline
@_exported import enum OfflineStore.ItemState
@_exported import enum OfflineStore.ItemType
@_exported import struct OfflineStore.Licence
@_exported import enum OfflineStore.ScannerReads
@_exported import struct OfflineStore.Source
@_exported import struct OfflineStore.StoreEvent
@_exported import struct OfflineStore.SubtitleTrack
// The range every `RangeFetcher` call speaks.
@_exported import struct OfflineHTTP.ByteRange
