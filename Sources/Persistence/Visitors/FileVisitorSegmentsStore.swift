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
/// One process at a time owns the directory (<doc:Behaviour#P5>): the store takes the directory's
/// owner lock (`owner.lock`, as a client's storage directory has) before it reads or writes the
/// file, and holds it as long as it lives. While another process holds it, nothing in the
/// directory is read or written: reads answer `nil`, and saves throw `.storage` saying the
/// directory is in use by another process. The lock is tried again on every later call, and once
/// taken the file is read afresh, so the other process's updates are kept.
///
/// Use one instance per directory: instances do not coordinate with each other (a second instance
/// of this process is refused the lock too).
public final class FileVisitorSegmentsStore: VisitorSegmentsStore {
    /// The file's name inside the storage directory.
    static let fileName = "visitor-segments.json"

    private let file: DocumentFile<VisitorSegmentsRecord>
    private let cache = Locked(Cache())

    private struct Cache: Sendable {
        var isLoaded = false
        var visitors: [String: VisitorSegments] = [:]
        /// The directory's owner lock, once taken; `nil` before the first call and while another
        /// process holds it (<doc:Behaviour#P5>).
        var lock: StorageDirectoryLock?
        /// Whether the last attempt to take the lock failed: said once, not at every call.
        var lockRefused = false
        /// The system refused the file while protected data is available (<doc:Behaviour#P8>): it
        /// is unread, and no save replaces it until a read succeeds.
        var refusal: SegmentsError?
    }

    /// A store in `directory`, created owner-only (0700) on first use if it does not exist.
    /// Nothing is read or written until the first call.
    ///
    /// - Parameters:
    ///   - directory: the storage directory, e.g. a folder of the platform's application-support directory.
    ///     One store per file: never a directory a client of this process or another one also
    ///     uses (the store takes the directory's owner lock, <doc:Behaviour#P5>, so it would be
    ///     refused there).
    ///   - logger: where recovery from a damaged file is reported. Visitor ids are never logged.
    public init(directory: URL, logger: any SegmentsLogger) {
        let diagnostics = StoreDiagnostics(
            logger: logger, prefix: "Segments:", subject: "visitor segments", fallback: "starting without visitor segments")
        self.file = DocumentFile(directory: StorageDirectory(url: directory), name: Self.fileName, diagnostics: diagnostics)
    }

    /// The stored segments of `visitorId`, or `nil` when there are none, the file was unusable, or
    /// another process owns the directory (<doc:Behaviour#P5>).
    public func segments(forVisitor visitorId: String) -> VisitorSegments? {
        cache.withLock { cache in
            guard (try? takeLock(&cache)) != nil else { return nil }
            load(&cache)
            return cache.visitors[visitorId]
        }
    }

    /// Replaces the stored segments of `visitorId` durably; throws ``SegmentsError`` with code
    /// `.storage` when the file cannot be written, leaving the previous file intact, when another
    /// process owns the directory (<doc:Behaviour#P5>), or when the file cannot be read yet
    /// (<doc:Behaviour#P8>). Every visitor's segments share one file, read back up to 8 MiB: a save
    /// that would make it larger is refused the same way, before anything is written
    /// (<doc:Behaviour#P7>), so the other visitors' segments are never lost with it.
    public func save(_ segments: VisitorSegments, forVisitor visitorId: String) throws {
        try cache.withLock { cache in
            try takeLock(&cache)
            load(&cache)
            if let refusal = cache.refusal { throw refusal }
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
        switch found {
        case .protectedDataUnavailable:
            // Unreadable until protected data is available (see Behaviour P8): the file is left as
            // it is and read again by the next call.
            return
        case .refused(let error):
            // A permission problem: left as it is, read again by the next call, never replaced unread.
            cache.refusal = error
            return
        case .record, .absent:
            break
        }
        cache.refusal = nil
        cache.visitors = found.record?.segments ?? [:]
        cache.isLoaded = true
    }

    /// Takes the directory's owner lock unless this store holds it (<doc:Behaviour#P5>). A lock held
    /// for a moment by a child process being started is waited out (about 50 ms at most).
    ///
    /// - Throws: ``SegmentsError`` `.storage`: another process holds the lock (logged once, until
    ///   it is taken), the lock file is refused, or it cannot be opened until protected data is
    ///   available (<doc:Behaviour#P8>).
    private func takeLock(_ cache: inout Cache) throws {
        guard cache.lock == nil else { return }
        let lock: StorageDirectoryLock
        do {
            lock = try StorageDirectoryLock.waitingOutMomentaryHolders {
                try StorageDirectoryLock.acquire(file.directory.url, refusals: file.refusals)
            }
        } catch {
            if !cache.lockRefused {
                let reason = SegmentsError.wrapping(error, as: .storage).message
                file.diagnostics.log(.error, "\(reason); visitor segments are neither read nor saved until it is free")
            }
            cache.lockRefused = true
            throw error
        }
        guard lock.isHeld else {
            // Its file is refused until protected data is available (see Behaviour P8).
            throw SegmentsError(.storage, "The stored visitor segments cannot be read until protected data is available; not saved")
        }
        if cache.lockRefused {
            file.diagnostics.log(.verbose, "The visitor segments folder's owner lock is free again; its file is read afresh")
        }
        cache.lock = lock
        cache.lockRefused = false
    }
}
