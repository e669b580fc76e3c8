import Foundation
import SegmentsDomain

/// Keeps every visitor's reporting segments in `visitor-segments.json` in the integration's storage
/// directory (<doc:Behaviour#V3>, <doc:Behaviour#P1>).
///
/// Saves replace the file atomically and create it readable by the owner only, so a crash leaves
/// either the old or the new file, never a mix. A damaged file is logged, set aside as
/// `visitor-segments.json.corrupt-<n>` and read as "no segments" (<doc:Behaviour#P2>). The file is
/// read once, on first use; later reads are answered from memory. Each save writes every visitor,
/// which suits the handful of visitors one app install has.
///
/// Use one instance per directory: instances do not coordinate with each other.
public final class FileVisitorSegmentsStore: VisitorSegmentsStore {
    /// The file's name inside the storage directory.
    static let fileName = "visitor-segments.json"

    private let file: DocumentFile<VisitorSegmentsRecord>
    private let cache = Locked(Cache())

    private struct Cache: Sendable {
        var isLoaded = false
        var visitors: [String: VisitorSegments] = [:]
    }

    /// A store in `directory`, created owner-only (0700) on first use if it does not exist.
    /// Nothing is read or written until the first call.
    ///
    /// - Parameters:
    ///   - directory: the storage directory, e.g. a folder of the platform's application-support directory.
    ///     One store per file: never a directory a client of this process or another one also
    ///     uses (a client's own directory is guarded by its owner lock; this store is not).
    ///   - logger: where recovery from a damaged file is reported. Visitor ids are never logged.
    public init(directory: URL, logger: any SegmentsLogger) {
        let diagnostics = StoreDiagnostics(
            logger: logger, prefix: "Segments:", subject: "visitor segments", fallback: "starting without visitor segments")
        self.file = DocumentFile(directory: StorageDirectory(url: directory), name: Self.fileName, diagnostics: diagnostics)
    }

    /// The stored segments of `visitorId`, or `nil` when there are none or the file was unusable.
    public func segments(forVisitor visitorId: String) -> VisitorSegments? {
        cache.withLock { cache in
            load(&cache)
            return cache.visitors[visitorId]
        }
    }

    /// Replaces the stored segments of `visitorId` durably; throws ``SegmentsError`` with code
    /// `.storage` when the file cannot be written, leaving the previous file intact, or cannot be
    /// read yet because protected data is not available (<doc:Behaviour#P8>). Every visitor's
    /// segments share one file, read back up to 8 MiB: a save that would make it larger is refused
    /// the same way, before anything is written (<doc:Behaviour#P7>), so the other visitors'
    /// segments are never lost with it.
    public func save(_ segments: VisitorSegments, forVisitor visitorId: String) throws {
        try cache.withLock { cache in
            load(&cache)
            guard cache.isLoaded else {
                // Writing now would replace the other visitors' segments, still unread (see Behaviour P8).
                throw SegmentsError(
                    .storage, "The stored visitor segments cannot be read until protected data is available; not saved")
            }
            var visitors = cache.visitors
            visitors[visitorId] = segments
            do {
                try file.write(VisitorSegmentsRecord(visitors))
            } catch {
                throw SegmentsError.wrapping(error, as: .storage)
            }
            cache.visitors = visitors
        }
    }

    private func load(_ cache: inout Cache) {
        guard !cache.isLoaded else { return }
        let found = file.read()
        // Unreadable until protected data is available (see Behaviour P8): the file is left as
        // it is and read again by the next call.
        if case .protectedDataUnavailable = found { return }
        cache.visitors = found.record?.segments ?? [:]
        cache.isLoaded = true
    }
}
