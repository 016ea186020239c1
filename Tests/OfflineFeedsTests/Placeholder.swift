import Testing

@Test func placeholder_OfflineFeedsTests() { #expect(true) }
