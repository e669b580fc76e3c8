import Foundation
import SegmentsDomain

/// Keeps the segment baseline and the link memory in `segment-baseline.json` in the integration's
/// storage directory (<doc:Behaviour#D1>, <doc:Behaviour#C4>, <doc:Behaviour#P1>).
///
/// Saves replace the file atomically and create it readable by the owner only. A damaged file is
/// logged (a `Segments:` line), set aside as `segment-baseline.json.corrupt-<n>` and read as
/// ``SegmentBaseline/empty``: the next fetch then counts every category as changed
/// (<doc:Behaviour#D3>) and rebuilds the file (<doc:Behaviour#P2>). The file is read once, on the
/// first `load()`; later reads are answered from memory.
///
/// Use one instance per directory: instances do not coordinate with each other.
public final class FileSegmentBaselineStore: SegmentBaselineStore {
    /// The file's name inside the storage directory.
    static let fileName = "segment-baseline.json"

    private let file: DocumentFile<BaselineRecord>
    private let cache = Locked(Cache())

    private struct Cache: Sendable {
        var isLoaded = false
        var baseline = SegmentBaseline.empty
        /// ``baseline`` is not written yet: a save was refused because protected data is not
        /// available, or the file could not be read yet (<doc:Behaviour#P8>).
        var unsaved = false
        /// The file exists but could not be read yet (<doc:Behaviour#P8>).
        var unread = false
    }

    /// A store in `directory`, created owner-only (0700) on first use if it does not exist.
    /// Nothing is read or written until the first call.
    ///
    /// - Parameters:
    ///   - directory: the integration's storage directory, e.g.
    ///     a folder of the platform's application-support directory.
    ///     One store per file: never a directory a client of this process or another one also
    ///     uses (a client's own directory is guarded by its owner lock; this store is not).
    ///   - logger: where recovery from a damaged file is reported. Customer ids are never logged.
    ///
    /// A store made this way has no report of protected data's availability: see
    /// <doc:Behaviour#P8> for what a refused file then means.
    public convenience init(directory: URL, logger: any SegmentsLogger) {
        self.init(storage: StorageDirectory(url: directory), logger: logger)
    }

    /// A store in `directory` whose refused files are transient only while `protectedData` reports
    /// protected data unavailable (<doc:Behaviour#P8>): the client's own store.
    package convenience init(directory: URL, logger: any SegmentsLogger, protectedData: any ProtectedDataAvailability) {
        self.init(storage: StorageDirectory(url: directory), logger: logger, refusals: StorageRefusals(protectedData: protectedData))
    }

    /// A store in `storage` (tests pass one that simulates write failures).
    init(storage: StorageDirectory, logger: any SegmentsLogger, refusals: StorageRefusals = .unreported) {
        let diagnostics = StoreDiagnostics(
            logger: logger, prefix: "Segments:", subject: "segment baseline", fallback: "starting with an empty baseline")
        self.file = DocumentFile(directory: storage, name: Self.fileName, diagnostics: diagnostics, refusals: refusals)
    }

    /// Deletes the file and forgets the baseline (``erase()``).
    func eraseFile() -> Bool {
        cache.withLock { cache in
            let gone = file.directory.remove(file.name)
            cache = Cache()
            cache.isLoaded = gone
            return gone
        }
    }

    /// The stored baseline, or ``SegmentBaseline/empty`` when there is none or the file was
    /// unusable (then logged).
    ///
    /// While protected data is not available (<doc:Behaviour#P8>) the file is left unread and this
    /// answers the baseline saved in memory meanwhile, else ``SegmentBaseline/empty``; the next call
    /// tries again. A file the system refuses while protected data is available is logged (an
    /// error) and read as ``SegmentBaseline/empty``, like an unreadable one: the next save replaces
    /// it.
    public func load() -> SegmentBaseline {
        cache.withLock { cache in
            if !cache.isLoaded, !cache.unsaved {
                let found = file.read()
                if case .protectedDataUnavailable = found {
                    cache.unread = true
                } else {
                    cache.unread = false
                    cache.baseline = found.record?.baseline ?? .empty
                    cache.isLoaded = true
                }
            }
            return cache.baseline
        }
    }

    /// Replaces the stored baseline durably.
    ///
    /// When the file cannot be written (a full disk), the previous file is **deleted** and
    /// ``SegmentsError`` `.storage` is thrown, so a replaced baseline — another customer's segments
    /// and link memory — never comes back after a restart. A baseline whose file would be larger
    /// than the 8 MiB read back is not saved, and the previous file is kept (nothing was written;
    /// <doc:Behaviour#P7>): `.storage` is thrown, and ``load()`` still answers the saved baseline.
    ///
    /// While protected data is not available (<doc:Behaviour#P8>) nothing is deleted and nothing is
    /// thrown: the baseline is kept in memory and written when protected data becomes available.
    public func save(_ baseline: SegmentBaseline) throws {
        try cache.withLock { cache in
            if cache.unread {
                cache.baseline = baseline
                cache.unsaved = true
                return
            }
            do {
                try file.writeOrDelete(BaselineRecord(baseline)) { deleted in
                    if deleted {
                        cache.baseline = .empty
                        cache.isLoaded = true
                    }
                }
            } catch let error as SegmentsError where error.isProtectedDataUnavailable {
                // A file never read (a save before the first load) must be read before the retry
                // writes over it (see Behaviour P8).
                if !cache.isLoaded { cache.unread = true }
                cache.baseline = baseline
                cache.isLoaded = true
                cache.unsaved = true
                return
            }
            cache.baseline = baseline
            cache.isLoaded = true
            cache.unsaved = false
        }
    }

    /// Writes a baseline kept in memory because protected data was not available (<doc:Behaviour#P8>);
    /// returns whether it did. Call it on the storage queue when protected data becomes available.
    ///
    /// A file this store has not read is read first, and written over only when it turned out
    /// missing or unusable (set aside, <doc:Behaviour#P2>): a stored baseline is left as it is until
    /// the next save, which comes after this read. The baseline in memory stays the current one:
    /// it is what the listeners were told. A file whose load was refused, with no save since, is
    /// read too: the saves from then on are written (the link memory of <doc:Behaviour#C4> among
    /// them), and a later ``load()`` answers what the file holds.
    @discardableResult
    package func retryAfterProtectedData() -> Bool {
        cache.withLock { cache in
            guard cache.unsaved || cache.unread else { return false }
            if cache.unread, !cache.unsaved {
                let found = file.read()
                switch found {
                case .protectedDataUnavailable, .refused:
                    return false  // still unread: the next retry reads it
                case .record, .absent:
                    cache.baseline = found.record?.baseline ?? .empty
                    cache.unread = false
                    cache.isLoaded = true
                    return false
                }
            }
            if cache.unread {
                switch file.read() {
                case .protectedDataUnavailable, .refused:
                    return false  // still unread: nothing is written over it
                case .record:
                    // Read now: the same baseline needs no write, and another is the next save's
                    // to replace.
                    cache.unread = false
                    cache.isLoaded = true
                    cache.unsaved = false
                    return false
                case .absent:
                    break
                }
            }
            do {
                try file.write(BaselineRecord(cache.baseline))
            } catch {
                if let failure = file.refusals.failure(error) {
                    file.diagnostics.log(.error, "Could not save the \(file.diagnostics.subject): \(failure)")
                }
                return false
            }
            cache.unsaved = false
            cache.unread = false
            cache.isLoaded = true
            return true
        }
    }
}
