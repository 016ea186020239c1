internal import GRDB

/// The schema, as migrations. A released migration is never edited: add a new one.
///
/// Times are REAL seconds since 1970 (UTC): exact enough, compact, and they sort. The CHECK
/// constraints keep the enumerations to the names of DESIGN §1, so a bug in a caller fails
/// loudly instead of storing a state nobody can display.
enum StoreSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: v1)
        migrator.registerMigration("v2", migrate: v2)
        migrator.registerMigration("v3", migrate: v3)
        migrator.registerMigration("v4", migrate: v4)
        migrator.registerMigration("v5", migrate: v5)
        migrator.registerMigration("v6", migrate: v6)
        migrator.registerMigration("v7", migrate: v7)
        migrator.registerMigration("v8", migrate: v8)
        migrator.registerMigration("v9", migrate: v9)
        migrator.registerMigration("v10", migrate: v10)
        migrator.registerMigration("v11", migrate: v11)
        migrator.registerMigration("v12", migrate: v12)
        migrator.registerMigration("v13", migrate: v13)
        migrator.registerMigration("v14", migrate: v14)
        migrator.registerMigration("v15", migrate: v15)
        migrator.registerMigration("v16", migrate: v16)
        migrator.registerMigration("v17", migrate: v17)
        return migrator
    }

    static func quoted(_ values: [String]) -> String {
        values.map { "'\($0)'" }.joined(separator: ",")
    }

    private static func v1(_ db: Database) throws {
        let states = quoted(ItemState.allCases.map(\.rawValue))
        let errors = quoted(ItemErrorCode.allCases.map(\.rawValue))
        let types = quoted(ItemType.allCases.map(\.rawValue))
        let kinds = quoted(FeedKind.allCases.map(\.rawValue))
        let licences = quoted(LicenceKind.allCases.map(\.rawValue))
        try db.execute(sql: """
            CREATE TABLE source (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL UNIQUE,
                title TEXT,
                feedURL TEXT NOT NULL,
                kind TEXT CHECK (kind IN (\(kinds))),
                subscribed INTEGER NOT NULL DEFAULT 1,
                etag TEXT,
                lastModified TEXT,
                lastSyncAt REAL,
                lastSyncError TEXT,
                nextSyncAt REAL,
                addedAt REAL NOT NULL
            );

            CREATE TABLE category (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL,
                parentID INTEGER REFERENCES category(id) ON DELETE CASCADE,
                folderName TEXT NOT NULL
            );
            -- NULLs are distinct in a plain UNIQUE, so top-level rows use 0 as their key.
            CREATE UNIQUE INDEX category_parent_name ON category(ifnull(parentID, 0), name);
            CREATE UNIQUE INDEX category_parent_folder ON category(ifnull(parentID, 0), folderName);

            CREATE TABLE item (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                sourceID INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                contentID TEXT NOT NULL,
                title TEXT NOT NULL,
                type TEXT NOT NULL CHECK (type IN (\(types))),
                mediaURL TEXT,
                size INTEGER,
                mimeType TEXT,
                duration REAL,
                publishedAt REAL,
                summary TEXT,
                thumbnailURL TEXT,
                subtitles TEXT,
                sha256 TEXT,
                state TEXT NOT NULL CHECK (state IN (\(states))),
                error TEXT CHECK (error IN (\(errors))),
                errorDetail TEXT,
                requested INTEGER NOT NULL DEFAULT 0,
                locked INTEGER NOT NULL DEFAULT 0,
                bytesPresent INTEGER NOT NULL DEFAULT 0,
                downloadedAt REAL,
                lastAccessAt REAL,
                fileName TEXT UNIQUE,
                addedAt REAL NOT NULL,
                updatedAt REAL NOT NULL,
                inCatalog INTEGER NOT NULL DEFAULT 1,
                quality TEXT,
                partialSeconds REAL,
                UNIQUE (sourceID, contentID)
            );
            CREATE INDEX item_state ON item(state);
            -- Lookups by source use UNIQUE (sourceID, contentID), lookups by file name the
            -- UNIQUE fileName: each is already an index, and one index fewer speeds big merges.

            CREATE TABLE itemCategory (
                itemID INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                categoryID INTEGER NOT NULL REFERENCES category(id) ON DELETE CASCADE,
                PRIMARY KEY (itemID, categoryID)
            ) WITHOUT ROWID;
            CREATE INDEX itemCategory_category ON itemCategory(categoryID);

            CREATE TABLE cacheRange (
                itemID INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                file TEXT NOT NULL,
                start INTEGER NOT NULL,
                "end" INTEGER NOT NULL,
                CHECK (start >= 0 AND "end" > start),
                PRIMARY KEY (itemID, file, start)
            ) WITHOUT ROWID;

            CREATE TABLE hlsSegment (
                itemID INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                sequence INTEGER NOT NULL,
                uri TEXT NOT NULL,
                duration REAL NOT NULL,
                byteRangeStart INTEGER,
                byteRangeLength INTEGER,
                size INTEGER,
                present INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (itemID, sequence)
            ) WITHOUT ROWID;

            CREATE TABLE licence (
                itemID INTEGER PRIMARY KEY REFERENCES item(id) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN (\(licences))),
                rentalDuration REAL,
                playDuration REAL,
                licenceURL TEXT,
                acquiredAt REAL,
                firstPlayedAt REAL,
                expiresAt REAL,
                key BLOB
            );

            CREATE TABLE setting (
                name TEXT PRIMARY KEY NOT NULL,
                value TEXT NOT NULL
            ) WITHOUT ROWID;

            CREATE TABLE dailyUsage (
                day TEXT PRIMARY KEY NOT NULL,
                bytes INTEGER NOT NULL DEFAULT 0
            ) WITHOUT ROWID;

            -- Append-only; no foreign keys so the log outlives what it mentions.
            CREATE TABLE event (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                time REAL NOT NULL,
                kind TEXT NOT NULL,
                itemID INTEGER,
                sourceID INTEGER,
                message TEXT NOT NULL,
                details TEXT
            );
            """)
    }

    /// v2: which version of the origin's file the cached bytes of each item file belong to,
    /// so a restart can resume with `If-Range` and a changed origin invalidates old bytes.
    private static func v2(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cacheValidator (
                itemID INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                file TEXT NOT NULL,
                etag TEXT,
                lastModified TEXT,
                totalSize INTEGER CHECK (totalSize IS NULL OR totalSize >= 0),
                PRIMARY KEY (itemID, file)
            ) WITHOUT ROWID;
            """)
    }

    /// v3: the JSON catalog's `lookup` URL template of a source, kept from its last sync so
    /// `download source/content-id` can fetch one item's metadata ("download to go").
    private static func v3(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE source ADD COLUMN lookupTemplate TEXT")
    }

    /// v4: the chosen rendition of each HLS item (its media playlist as fetched), replacing
    /// the per-segment table: which segment bytes are on disk is the range map's job, like
    /// every other cached byte, so one crash-safety rule covers both.
    private static func v4(_ db: Database) throws {
        try db.execute(sql: """
            DROP TABLE hlsSegment;
            CREATE TABLE hlsStream (
                itemID INTEGER PRIMARY KEY REFERENCES item(id) ON DELETE CASCADE,
                playlistURL TEXT NOT NULL,
                playlist BLOB NOT NULL,
                quality TEXT,
                bandwidth INTEGER,
                resolution TEXT,
                codecs TEXT,
                estimatedSize INTEGER,
                renditions BLOB,
                chosenAt REAL NOT NULL
            );
            """)
    }

    /// v5: the newest change of any item without reading every item. The mount checks the
    /// store's change token every second (`changeToken`); without the index its
    /// `max(updatedAt)` scans the whole item table each time (`offlinefs-bench tree` prints
    /// the cost).
    private static func v5(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX item_updatedAt ON item(updatedAt)")
    }

    /// v6: the thumbnail's size (a subtitle track's is in its JSON), so a side file has its
    /// size when listed: copiers copy exactly `st_size` bytes, and mpv waits on a 0-byte
    /// subtitle file it takes for one being written.
    private static func v6(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE item ADD COLUMN thumbnailSize INTEGER CHECK (thumbnailSize >= 0)")
    }

    /// v7: what was played (DESIGN §1 as amended in docs/playback.md): the resume point,
    /// when the item was watched (NULL: not watched; `delete-watched-after` counts from it),
    /// the last playback, and the last explicit mark (a command or an xattr write), which
    /// wins over the reads of a playback that began before it.
    private static func v7(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE item ADD COLUMN position REAL CHECK (position >= 0);
            ALTER TABLE item ADD COLUMN watchedAt REAL;
            ALTER TABLE item ADD COLUMN lastPlayedAt REAL;
            ALTER TABLE item ADD COLUMN playMarkedAt REAL;
            CREATE INDEX item_watchedAt ON item(watchedAt) WHERE watchedAt IS NOT NULL;
            """)
    }

    /// v8: HLS choices (docs/hls.md). The audio languages asked for beside the default audio
    /// (`download … audio=en,fr`, comma-separated), on the item and on the rendition chosen
    /// for them; and the master playlist's variants, so `offlinefs variants` and
    /// `user.offline.variants` list them without the network.
    private static func v8(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE item ADD COLUMN audioLanguages TEXT;
            ALTER TABLE hlsStream ADD COLUMN audioLanguages TEXT;
            ALTER TABLE hlsStream ADD COLUMN variants BLOB;
            """)
    }

    /// v9: the feed's artwork, as the last sync found it (`folder.jpg` with `sidecars nfo`).
    private static func v9(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE source ADD COLUMN imageURL TEXT")
    }

    /// v10: the URL a side file's cached bytes came from, so an item whose thumbnail or
    /// subtitle URL another item has cached whole links that file instead of fetching it
    /// (a podcast gives every episode one image). Indexed only where set: just cached side
    /// files have it. Existing rows get their item's URL now.
    private static func v10(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE cacheValidator ADD COLUMN url TEXT;
            UPDATE cacheValidator SET url = (SELECT thumbnailURL FROM item WHERE item.id = cacheValidator.itemID)
                WHERE file = 'thumbnail';
            UPDATE cacheValidator SET url = (SELECT json_extract(track.value, '$.url')
                    FROM item, json_each(item.subtitles) AS track
                    WHERE item.id = cacheValidator.itemID AND json_valid(item.subtitles)
                      AND cacheValidator.file = 'subtitle.' || json_extract(track.value, '$.language'))
                WHERE file LIKE 'subtitle.%';
            CREATE INDEX cacheValidator_url ON cacheValidator(url) WHERE url IS NOT NULL;
            """)
    }

    /// v11: the events a listing may show, indexed by sequence, so the change token the mount
    /// reads every second finds the newest of them at once (`LibraryStore.changeToken`):
    /// during a long scan past `cache-limit` the newest events are all notes of streamed
    /// items evicted, and without the index the token's query walked back over every one.
    private static func v11(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX event_listed ON event(seq) WHERE NOT (kind = 'evict' AND itemID IS NULL)")
    }

    /// v12: a source's HLS items, indexed apart. Every sync, a `304` one too, asks which of
    /// them still need a rendition (`hlsItemsWithoutStream`); without the index that walked
    /// every item of the source (72 ms and 2 MiB of page cache at 100,000 items).
    private static func v12(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX item_hls ON item(sourceID) WHERE type = 'hls'")
    }

    /// v13: the validators of a paged catalog's further pages and the items each listed, so
    /// that a sync asks for them conditionally and a `304` keeps the page's items listed
    /// without fetching, parsing or merging them again (docs/catalog-format.md, "Paging").
    /// The first page's validators are the source's own (`etag`, `lastModified`).
    private static func v13(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE catalogPage (
                id INTEGER PRIMARY KEY,
                sourceID INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                url TEXT NOT NULL,
                etag TEXT,
                lastModified TEXT,
                nextURL TEXT,
                itemIDs BLOB NOT NULL,
                UNIQUE (sourceID, url)
            );
            """)
    }

    /// v14: the size the feed last stated for each item, apart from the size shown (`size`),
    /// which the origin's answers may have corrected. A sync that states the same wrong length
    /// again keeps the origin's size, after an eviction too; a new length is news of a new file.
    private static func v14(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE item ADD COLUMN feedSize INTEGER")
    }

    /// v15: the note of a sync the origin answered `304` (kind `sync`, no details) is left out
    /// of the listed events too: a mount rebuilt its whole tree after each such sync.
    private static func v15(_ db: Database) throws {
        try db.execute(sql: "DROP INDEX event_listed")
        try db.execute(sql: "CREATE INDEX event_listed ON event(seq) WHERE \(LibraryStore.listedEvents)")
    }

    /// v16: when an item's media last changed at its origin (the feed named another file or
    /// checksum, or the origin's validator changed) and when what its side files are made of
    /// last changed (title, summary, dates, picture, subtitles): its files' times follow, so
    /// `rsync -a` copies a change that keeps the size (docs/decisions.md). Likewise when a
    /// source's artwork (`folder.jpg`) last moved to another URL.
    private static func v16(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE item ADD COLUMN mediaChangedAt REAL;
            ALTER TABLE item ADD COLUMN sidesChangedAt REAL;
            ALTER TABLE source ADD COLUMN imageChangedAt REAL;
            """)
    }

    /// v17: when an item was asked for (`Item.requestedAt`): `auto-purge` frees room for it
    /// only with items downloaded before, so a queue larger than the disk does not evict
    /// each item it downloaded for the next. Items requested before: their last change.
    private static func v17(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE item ADD COLUMN requestedAt REAL;
            UPDATE item SET requestedAt = updatedAt WHERE requested = 1;
            """)
    }
}
