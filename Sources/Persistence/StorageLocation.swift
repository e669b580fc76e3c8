import Foundation

/// Where the SDK keeps its files by default (<doc:Behaviour#P1>).
package enum StorageLocation {
    /// The folder inside the platform's data directory that holds one sub-folder per integration.
    static let sdkFolderName = "RealtimeSegments"
    /// The longest folder name used as is; longer ids are shortened and made unique by a hash.
    static let maximumFolderNameLength = 64

    /// The default storage directory of the integration `integrationId`: a folder of its own inside
    /// the platform's application-support directory.
    ///
    /// - Apple platforms: `Library/Application Support/[<bundle id>/]RealtimeSegments/<id>` (the
    ///   bundle id keeps apps apart on macOS, where that directory is shared); on tvOS, which gives
    ///   apps no persistent local storage, `Library/Caches/…` (the system may purge it).
    /// - Linux and others: `$XDG_DATA_HOME/RealtimeSegments/<id>`, or `~/.local/share/…` when
    ///   `XDG_DATA_HOME` is unset or not absolute (as the XDG specification says).
    ///
    /// The id is turned into a safe folder name (``folderName(forIntegrationId:)``): letters, digits,
    /// `-`, `_` and `.` are kept, upper-case letters are lowered, and an id that needed changes gets a
    /// stable hash appended so distinct ids never share a folder, on a case-insensitive volume
    /// either (<doc:Behaviour#P10>). Nothing is created here: the stores create the directory,
    /// owner-only, on first use; ``moveEarlierFolder(integrationId:in:)`` moves a folder that an
    /// earlier version named differently.
    package static func defaultDirectory(integrationId: String) -> URL {
        defaultParentDirectory().appendingPathComponent(folderName(forIntegrationId: integrationId), isDirectory: true)
    }

    /// The default directory earlier versions gave `integrationId`, before the case rule of
    /// ``folderName(forIntegrationId:)``: where a folder from before an upgrade may still be.
    package static func earlierDefaultDirectory(integrationId: String) -> URL {
        defaultParentDirectory().appendingPathComponent(earlierFolderName(forIntegrationId: integrationId), isDirectory: true)
    }

    /// An integration id for an integration identified by a secret (an API key): `<kind>-` and the
    /// first 32 hex digits of a SHA-256 of the secret, so the folder name — visible to backup tools,
    /// file listings and crash reports — never reveals the key (<doc:Behaviour#P4>) and distinct
    /// keys never share a folder.
    package static func integrationId(kind: String, secret: String) -> String {
        kind + "-" + String(SHA256.hexDigest(Array("RealtimeSegments storage folder\n\(secret)".utf8)).prefix(32))
    }

    /// The digest that names an integration — its backend, base URL and storage — in what it
    /// stores (<doc:Behaviour#D1>): equal for equal descriptions, and revealing nothing of them.
    package static func integrationDigest(_ description: String) -> String {
        String(SHA256.hexDigest(Array("RealtimeSegments integration\n\(description)".utf8)).prefix(32))
    }

    /// Renames the folder of an earlier version, named after the secret itself, to its hashed
    /// name, so no key is left in a folder name. It is moved the way
    /// ``moveEarlierFolder(integrationId:in:)`` moves a folder — under the old folder's owner lock
    /// (<doc:Behaviour#P5>), so a process still using it is never pulled from under — except that
    /// when the new folder exists too, both are left as they are (`.nothingToMove`): a set-aside
    /// name would still carry the key. A failure leaves everything as it was (the new folder then
    /// starts empty) and is reported in the answer.
    @discardableResult
    package static func moveLegacyFolder(_ legacy: URL, to current: URL) -> EarlierFolderMove {
        moveEarlierFolder(legacy, to: current, settingAside: false)
    }

    /// A folder name for `integrationId` that is safe on every file system, case-insensitive ones
    /// included (<doc:Behaviour#P1>, <doc:Behaviour#P10>), and distinct for distinct ids:
    ///
    /// - letters, digits, `-`, `_` and `.` are kept; when anything had to change (other characters,
    ///   a leading dot, an empty or over-long id) a stable hash of the original id is appended, so
    ///   `a/b` and `a_b` never share a folder;
    /// - a name that would contain an upper-case letter is lower-cased and gets
    ///   ``caseSafeHash(of:)`` of the original id appended instead (`project-ABC` →
    ///   `project-abc-<16 hex digits>`), so ids that differ only in letter case never name one
    ///   folder on APFS or HFS+, which fold case. Names never contain an upper-case letter.
    ///
    /// An id without upper-case letters keeps the name earlier versions gave it.
    static func folderName(forIntegrationId integrationId: String) -> String {
        let earlier = earlierFolderName(forIntegrationId: integrationId)
        guard earlier.unicodeScalars.contains(where: { ("A"..."Z").contains($0) }) else { return earlier }
        return safePrefix(of: integrationId).lowercased() + "-" + caseSafeHash(of: integrationId)
    }

    /// The folder name earlier versions gave `integrationId` (before the case rule): the safe
    /// characters of the id as they were, with ``stableHash(_:)`` appended when anything had to
    /// change. Kept to find those folders and move them (``moveEarlierFolder(integrationId:in:)``),
    /// and for the bundle-id folder of Apple platforms, whose name follows the platform's own
    /// convention.
    static func earlierFolderName(forIntegrationId integrationId: String) -> String {
        let name = safePrefix(of: integrationId)
        if name == integrationId && !name.isEmpty { return name }
        return (name.isEmpty ? "integration" : name) + "-" + stableHash(integrationId)
    }

    /// The id with every unsafe character replaced by `_`, a leading dot by `_`, and cut to
    /// ``maximumFolderNameLength`` characters.
    private static func safePrefix(of integrationId: String) -> String {
        var name = String(integrationId.unicodeScalars.map { isSafe($0) ? Character($0) : "_" })
        if name.hasPrefix(".") { name = "_" + name.dropFirst() }
        if name.count > maximumFolderNameLength { name = String(name.prefix(maximumFolderNameLength)) }
        return name
    }

    /// The suffix that keeps a lower-cased folder name distinct (<doc:Behaviour#P10>): the first 16 hex
    /// digits (lower case) of the SHA-256 of `RealtimeSegments folder case\n` followed by the id's
    /// UTF-8 bytes. A fixed function of the id's bytes, so every version and platform finds the
    /// same folder; changing it would orphan folders.
    static func caseSafeHash(of integrationId: String) -> String {
        String(SHA256.hexDigest(Array("RealtimeSegments folder case\n\(integrationId)".utf8)).prefix(16))
    }

    /// The per-user data directory of the platform.
    static func applicationDataDirectory() -> URL {
        #if canImport(Darwin)
        #if os(tvOS)
        // tvOS gives apps no persistent local storage: Application Support cannot be created on a
        // device, Caches can (and may be purged).
        let directory = FileManager.SearchPathDirectory.cachesDirectory
        let fallback = "Library/Caches"
        #else
        let directory = FileManager.SearchPathDirectory.applicationSupportDirectory
        let fallback = "Library/Application Support"
        #endif
        let support = FileManager.default.urls(for: directory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(fallback)
        guard let bundleId = Bundle.main.bundleIdentifier, !bundleId.isEmpty else { return support }
        // The bundle id keeps its earlier name (no case rule): it is the platform's convention for
        // this folder, and moving every app's folder would cost more than the case rule buys here.
        return support.appendingPathComponent(earlierFolderName(forIntegrationId: bundleId), isDirectory: true)
        #else
        return dataHome(environment: ProcessInfo.processInfo.environment, homeDirectory: NSHomeDirectory())
        #endif
    }

    /// The XDG data home: `$XDG_DATA_HOME` when it is an absolute path, else `<home>/.local/share`.
    static func dataHome(environment: [String: String], homeDirectory: String) -> URL {
        if let configured = environment["XDG_DATA_HOME"], configured.hasPrefix("/") {
            return URL(fileURLWithPath: configured, isDirectory: true)
        }
        return URL(fileURLWithPath: homeDirectory, isDirectory: true)
            .appendingPathComponent(".local", isDirectory: true)
            .appendingPathComponent("share", isDirectory: true)
    }

    private static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".": true
        default: false
        }
    }

    /// FNV-1a over the UTF-8 bytes, as 16 hex digits: stable across launches and platforms,
    /// unlike `hashValue`, so the same id always finds the same folder (the suffix of sanitised
    /// ids without upper-case letters, as in earlier versions).
    private static func stableHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
