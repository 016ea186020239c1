import Testing

@Test func placeholder_OfflineStoreTests() { #expect(true) }
