import Foundation
import SegmentsDomain
import SegmentsPersistence

/// A process-wide table of what the users of each storage directory share, keyed by the
/// directory's device and inode (<doc:Behaviour#P5>, <doc:Behaviour#P10>): `dir`, `dir/.`, a
/// symbolic link to it and, on a case-insensitive volume, `Dir` are one entry. A directory that
/// cannot be created or inspected is keyed by its resolved path instead.
///
/// File stores do not coordinate between instances, so everything that writes one directory must
/// go through the same instances: ``FileStoreRegistry`` keeps a client's stores and owner lock
/// here, `AudienceSegmentsClient` its visitor registries. Entries the caller reports as no
/// longer in use are dropped on the next access, so the table never outlives its users.
final class DirectoryTable<Entry: Sendable>: Sendable {
    /// What an entry is found by.
    enum Key: Hashable, Sendable {
        case folder(DirectoryIdentity)
        case path(String)
    }

    private struct Slot {
        /// The path the entry was made for, to see whether its folder is still the one keyed (a
        /// folder deleted while in use frees its inode for another one).
        let path: String
        var entry: Entry
    }

    private let entries: Locked<[Key: Slot]>
    private let inUse: @Sendable (Entry) -> Bool
    private let identify: @Sendable (String) -> DirectoryIdentity?

    /// A table whose entries are kept while `inUse` says so. `identify` tells which directory a
    /// path names (the file system's answer; tests pass one that folds letter case, as APFS does).
    init(
        keepingWhile inUse: @escaping @Sendable (Entry) -> Bool,
        identify: @escaping @Sendable (String) -> DirectoryIdentity? = { DirectoryIdentity.of($0) }
    ) {
        self.entries = Locked([:])
        self.inUse = inUse
        self.identify = identify
    }

    /// Runs `body` on the entry of `directory` (made by `make` when there is none) under the
    /// table's lock. `body` and `make` must stay short: building stores (which open no file) and
    /// taking a directory's owner lock (create the folder, open and `flock` its lock file) at
    /// most, never a call into an app's code.
    ///
    /// The directory is created (owner-only) when missing, outside the table's lock, so that it has
    /// an identity: a key by path, then by inode once it exists, would give one folder two entries.
    func withEntry<Result>(
        of directory: URL, make: () -> Entry, _ body: (inout Entry) throws -> Result
    ) rethrows -> Result {
        let path = directory.standardizedFileURL.resolvingSymlinksInPath().path
        let key = key(of: path)
        return try entries.withLock { entries in
            entries = entries.filter { inUse($0.value.entry) }
            // A slot whose own path no longer names the keyed folder is stale: its folder was
            // deleted and the inode reused by another (one `stat`, as short as the lock allows).
            let found = entries[key].flatMap { $0.path == path || self.key(of: $0.path, creating: false) == key ? $0 : nil }
            var slot = found ?? Slot(path: path, entry: make())
            defer { entries[key] = slot }
            return try body(&slot.entry)
        }
    }

    /// Runs `body` on every entry under the table's lock.
    func forEach(_ body: (Entry) -> Void) {
        entries.withLock { $0.values.forEach { body($0.entry) } }
    }

    /// The key of the directory at `path`, created first when missing and `creating`.
    private func key(of path: String, creating: Bool = true) -> Key {
        if let identity = identify(path) { return .folder(identity) }
        guard creating else { return .path(path) }
        DirectoryIdentity.createDirectory(path)
        return identify(path).map(Key.folder) ?? .path(path)
    }
}

/// A reference that does not keep its object alive: the entry of a ``DirectoryTable`` whose
/// shared object should end with its last user.
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?
}
