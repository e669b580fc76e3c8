import SegmentsDomain

/// What the stores asked of the file system, counted for tests (<doc:Behaviour#R1>: what a call
/// costs on the caller's thread). Nothing is counted unless a test is watching a directory.
struct FileOperationCounts: Hashable, Sendable {
    /// `open` calls, creating ones included.
    var opens = 0
    /// Opens that created a file (`O_CREAT`).
    var creations = 0
    /// `read`/`pread` calls, and the bytes they returned.
    var reads = 0
    var bytesRead = 0
    /// `write` calls, and the bytes they wrote.
    var writes = 0
    var bytesWritten = 0
    /// `fsync`/`fdatasync` of a file.
    var syncs = 0
    /// `fsync` of a directory.
    var directorySyncs = 0
    /// `rename` and `link`: a file given a new name.
    var renames = 0
    var links = 0
    /// `ftruncate`.
    var truncations = 0
    /// Directory listings.
    var listings = 0
}

/// A file call that a test can make fail (see ``FileOperationLog/failing(_:under:_:)``).
enum FileOperationKind: Hashable, Sendable {
    /// Every `open` of ``POSIXFile``, creating ones included.
    case open
    /// `read` in ``POSIXFile/contents(of:maximumSize:)``, `pread` in ``POSIXFile/bytes(of:in:)``.
    case read
    /// `write` in ``POSIXFile/writeAll(_:_:path:)``.
    case write
    /// `rename` in ``POSIXFile/move(_:over:)``.
    case rename
    /// `link` in ``POSIXFile/hardLink(_:to:)``.
    case link
    /// `ftruncate` in ``POSIXFile/cut(_:to:path:)``.
    case truncate
    /// `flock` in ``StorageDirectoryLock/acquire(_:creating:)``.
    case lock
}

/// How an injected call fails (test seam, see ``FileOperationLog/failing(_:under:_:)``).
struct InjectedFileFault: Hashable, Sendable {
    /// Which call fails.
    let kind: FileOperationKind
    /// The `errno` it sets; `0` makes a `write` or `read` return 0 (nothing written, or the end of the
    /// file) instead of -1.
    let code: Int32
    /// How many calls in a row fail, from the first one under the directory.
    let times: Int

    init(_ kind: FileOperationKind, errno code: Int32, times: Int = 1) {
        self.kind = kind
        self.code = code
        self.times = times
    }
}

/// The test seam behind ``FileOperationCounts``: the file calls of ``POSIXFile`` and
/// ``StorageDirectory`` report here, and a test counts those under its own directory, so tests
/// running in parallel on other directories do not disturb its figures.
///
/// It is also the fault-injection seam (tests only): while ``failing(_:under:_:)`` runs, the next
/// calls of a kind on paths under a test's directory fail as the system call would (`errno` set,
/// -1 returned), so the recovery paths of a full disk or an interrupted call can be exercised.
/// Nothing is injected, and production code pays one check of an empty list, unless a test asked.
enum FileOperationLog {
    private final class Watch: Sendable {
        let prefix: String
        let counts = Locked(FileOperationCounts())
        init(prefix: String) { self.prefix = prefix }
    }

    private static let watches = Locked<[Watch]>([])

    /// The calls made on paths under `directory` while `body` runs (on any thread).
    static func counting<Result>(under directory: String, _ body: () throws -> Result) rethrows -> (
        result: Result, counts: FileOperationCounts
    ) {
        let watch = Watch(prefix: directory.hasSuffix("/") ? directory : directory + "/")
        watches.withLock { $0.append(watch) }
        defer { watches.withLock { $0.removeAll { $0 === watch } } }
        let result = try body()
        return (result, watch.counts.value)
    }

    private final class Fault: Sendable {
        let prefix: String
        let kind: FileOperationKind
        let code: Int32
        let remaining: Locked<Int>
        /// Set for an interception (see ``intercepting(_:under:_:_:)``): called, never used up,
        /// and the call then goes on (or fails, when a fault is injected too).
        let hook: (@Sendable (_ path: String) -> Void)?
        init(prefix: String, fault: InjectedFileFault) {
            self.prefix = prefix
            kind = fault.kind
            code = fault.code
            remaining = Locked(fault.times)
            hook = nil
        }
        init(prefix: String, kind: FileOperationKind, hook: @escaping @Sendable (_ path: String) -> Void) {
            self.prefix = prefix
            self.kind = kind
            code = 0
            remaining = Locked(0)
            self.hook = hook
        }
    }

    private static let faults = Locked<[Fault]>([])

    /// Test seam: runs `body` (its work may go on on any thread) while the calls `faults` name fail
    /// on paths under `directory`, each for its next `times` calls. Returns `body`'s result.
    @discardableResult
    static func failing<Result>(_ faults: [InjectedFileFault], under directory: String, _ body: () throws -> Result)
        rethrows -> Result
    {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        let added = faults.map { Fault(prefix: prefix, fault: $0) }
        Self.faults.withLock { $0.append(contentsOf: added) }
        defer { Self.faults.withLock { list in list.removeAll { fault in added.contains { $0 === fault } } } }
        return try body()
    }

    /// Test seam: runs `body` (its work may go on on any thread) while `hook` is called with the
    /// path before every `kind` call on a path under `directory`, on the thread making the call
    /// and holding whatever locks it holds. The hook may block — a test holds a call midway to see
    /// what other threads can do meanwhile — and the call goes on when it returns. Returns
    /// `body`'s result.
    @discardableResult
    static func intercepting<Result>(
        _ kind: FileOperationKind, under directory: String, _ hook: @escaping @Sendable (_ path: String) -> Void,
        _ body: () throws -> Result
    ) rethrows -> Result {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        let added = Fault(prefix: prefix, kind: kind, hook: hook)
        faults.withLock { $0.append(added) }
        defer { faults.withLock { list in list.removeAll { $0 === added } } }
        return try body()
    }

    /// The `errno` the next `kind` call on `path` must fail with, when a test injected one (the
    /// injection is then used up); `nil` for the real call. A test's interceptions of the call
    /// run first (see ``intercepting(_:under:_:_:)``), outside this seam's lock.
    static func injectedFailure(_ kind: FileOperationKind, _ path: String) -> Int32? {
        let candidates = faults.withLock { list in
            list.isEmpty ? [] : list.filter { $0.kind == kind && (path + "/").hasPrefix($0.prefix) }
        }
        for hook in candidates.compactMap(\.hook) { hook(path) }
        for fault in candidates where fault.hook == nil {
            let taken = fault.remaining.withLock { remaining in
                guard remaining > 0 else { return false }
                remaining -= 1
                return true
            }
            if taken { return fault.code }
        }
        return nil
    }

    /// Counts one call on `path`.
    static func record(_ path: String, _ change: (inout FileOperationCounts) -> Void) {
        let matching = watches.withLock { list in list.isEmpty ? [] : list.filter { (path + "/").hasPrefix($0.prefix) } }
        for watch in matching { watch.counts.withLock(change) }
    }
}
