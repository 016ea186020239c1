// OfflineFeeds
