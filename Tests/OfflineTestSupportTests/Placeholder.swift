import Testing

@Test func placeholder_OfflineTestSupportTests() { #expect(true) }
