import SegmentsDomain

/// Why a stored file could not be used (<doc:Behaviour#P2>).
enum StoredFileProblem: Error, Hashable, Sendable {
    /// The file has no bytes: a write was interrupted before the first byte reached the disk.
    case empty
    /// The bytes are not JSON: truncated or damaged.
    case notJSON
    /// The text is in another encoding than UTF-8 (UTF-16 or UTF-32, named), refused before any
    /// parsing (<doc:Behaviour#P7>).
    case notUTF8(encoding: String)
    /// JSON, but not the structure this SDK writes.
    case wrongShape
    /// Written by a newer SDK in a format this one does not know.
    case futureVersion(Int)
    /// Not read at all: a symbolic link, not a regular file, another user's, hard-linked, or over
    /// the size cap (<doc:Behaviour#P7>).
    case untrusted(UntrustedFile)

    /// A short reason, safe to log at any level: it never quotes the file's content.
    var summary: String {
        switch self {
        case .empty: "empty file"
        case .notJSON: "not valid JSON, truncated or damaged"
        case .notUTF8(let encoding): "\(encoding) text, not UTF-8, not read"
        case .wrongShape: "unexpected content"
        case .futureVersion(let version): "unknown format version \(version), written by a newer SDK"
        case .untrusted(.symbolicLink): "a symbolic link, not read"
        case .untrusted(.notARegularFile): "not a regular file, not read"
        case .untrusted(.foreignOwner): "owned by another user, not read"
        case .untrusted(.tooLarge): "larger than the size limit, not read"
        case .untrusted(.hardLinked): "a file with more than one name (a hard link), not read"
        }
    }
}

/// The log lines of one store's recovery, with the store's prefix and words.
///
/// Lines at warning level and above name only the file and the kind of damage, never content,
/// customer ids or the storage path (it may contain the integration id); the decoder's detailed
/// error is added only at verbose level (<doc:Behaviour#P4>).
struct StoreDiagnostics: Sendable {
    /// Where the lines go.
    let logger: any SegmentsLogger
    /// The first word of every line, e.g. `Segments:` (<doc:Behaviour#L1>).
    let prefix: String
    /// What the file holds, e.g. `segment baseline`.
    let subject: String
    /// What the store does without the file, e.g. `starting empty`.
    let fallback: String

    /// The file does not exist yet: normal on first start, so only verbose.
    func missing(_ name: String) {
        logger.log(.verbose, "\(prefix) No stored \(subject) (\(name)) yet, \(fallback)")
    }

    /// The file was damaged and set aside as `asideName` (or deleted when `nil`).
    func setAside(_ name: String, problem: StoredFileProblem, asideName: String?, detail: (any Error)?) {
        let disposal = asideName.map { "set aside as \($0)" } ?? "deleted"
        logger.log(.warning, "\(prefix) Stored \(subject) (\(name)) is unusable (\(problem.summary)); \(disposal), \(fallback)")
        if let detail, logger.isEnabled(.verbose) {
            logger.log(.verbose, "\(prefix) \(name) decoding detail: \(detail)")
        }
    }

    /// The file exists but could not be read (permissions, I/O error): left in place, since the
    /// next successful save replaces it.
    func unreadable(_ name: String, error: any Error) {
        logger.log(.error, "\(prefix) Could not read the stored \(subject): \(error); \(fallback)")
    }

    /// The system refused the file (`EACCES`/`EPERM`) while protected data is available: a
    /// permission problem, not a wait for the first unlock (<doc:Behaviour#P8>). The file is left
    /// in place unread, and never replaced by a save before it has been read.
    func refused(_ name: String, error: any Error) {
        logger.log(.error, "\(prefix) The stored \(subject) (\(name)) cannot be read, it is left as it is: \(error)")
    }

    /// The file could not be `doing` (read, saved) because protected data is not available yet
    /// (<doc:Behaviour#P8>): nothing is deleted or set aside, and it is done again once available.
    /// Only said while the platform reports protected data unavailable.
    func protectedDataUnavailable(_ name: String, doing: String) {
        logger.log(
            .warning,
            "\(prefix) The stored \(subject) (\(name)) cannot be \(doing) until protected data is available (before the device's first unlock); kept in memory, retried when it becomes available")
    }

    /// Any other line, at `level`.
    func log(_ level: LogLevel, _ message: String) {
        logger.log(level, "\(prefix) \(message)")
    }
}
