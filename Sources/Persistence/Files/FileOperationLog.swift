import SegmentsDomain

/// What the stores asked of the file system, counted for tests (see Behaviour R1: what a call
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

/// The test seam behind ``FileOperationCounts``: the file calls of ``POSIXFile`` and
/// ``StorageDirectory`` report here, and a test counts those under its own directory, so tests
/// running in parallel on other directories do not disturb its figures.
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

    /// Counts one call on `path`.
    static func record(_ path: String, _ change: (inout FileOperationCounts) -> Void) {
        let matching = watches.withLock { list in list.isEmpty ? [] : list.filter { (path + "/").hasPrefix($0.prefix) } }
        for watch in matching { watch.counts.withLock(change) }
    }
}
