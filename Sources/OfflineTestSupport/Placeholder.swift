// OfflineTestSupport
