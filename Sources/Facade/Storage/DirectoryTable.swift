import Foundation
import SegmentsDomain

/// A process-wide table of what the users of each storage directory share, keyed by the
/// directory's resolved path (so `dir`, `dir/.` and a symlink to it are one entry).
///
/// File stores do not coordinate between instances, so everything that writes one directory must
/// go through the same instances: ``FileStoreRegistry`` keeps a client's stores and owner lock
/// here, `AudienceSegmentsClient` its visitor registries. Entries the caller reports as no
/// longer in use are dropped on the next access, so the table never outlives its users.
final class DirectoryTable<Entry: Sendable>: Sendable {
    private let entries: Locked<[String: Entry]>
    private let inUse: @Sendable (Entry) -> Bool

    /// A table whose entries are kept while `inUse` says so.
    init(keepingWhile inUse: @escaping @Sendable (Entry) -> Bool) {
        self.entries = Locked([:])
        self.inUse = inUse
    }

    /// Runs `body` on the entry of `directory` (made by `make` when there is none) under the
    /// table's lock. `body` and `make` must stay short: building stores (which open no file) and
    /// taking a directory's owner lock (create the folder, open and `flock` its lock file) at
    /// most, never a call into an app's code.
    func withEntry<Result>(
        of directory: URL, make: () -> Entry, _ body: (inout Entry) throws -> Result
    ) rethrows -> Result {
        let key = directory.standardizedFileURL.resolvingSymlinksInPath().path
        return try entries.withLock { entries in
            entries = entries.filter { inUse($0.value) }
            var entry = entries[key] ?? make()
            defer { entries[key] = entry }
            return try body(&entry)
        }
    }

    /// Runs `body` on every entry under the table's lock.
    func forEach(_ body: (Entry) -> Void) {
        entries.withLock { $0.values.forEach(body) }
    }
}

/// A reference that does not keep its object alive: the entry of a ``DirectoryTable`` whose
/// shared object should end with its last user.
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?
}
