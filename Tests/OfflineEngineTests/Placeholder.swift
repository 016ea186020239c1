import Testing

@Test func placeholder_OfflineEngineTests() { #expect(true) }
