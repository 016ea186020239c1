import Testing

@Test func placeholder_OfflineHTTPTests() { #expect(true) }
