import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts the descriptors this process has open on files under a folder, for the tests that prove
/// a store closes what it opens (see Behaviour E4, P2, P5). Only the test's own folder counts, so
/// tests running in parallel do not disturb the figure.
///
/// - Linux: the links in `/proc/self/fd`; a descriptor of a replaced file ("… (deleted)") still
///   names its old path, so it counts.
/// - Darwin (no `/proc`): every descriptor below the table size, named with `fcntl(F_GETPATH)`.
///   Whether a descriptor of an unlinked file still names its old path there is up to the
///   kernel's name cache; this is unverified until the Apple CI runs (see `Docs/Releasing.md`).
enum OpenDescriptors {
    /// Whether this platform can count at all.
    static var available: Bool {
        #if os(Linux)
        FileManager.default.fileExists(atPath: "/proc/self/fd")
        #elseif canImport(Darwin)
        true
        #else
        false
        #endif
    }

    /// Descriptors open on files under `directory` (resolved with `realpath`, as the kernel names them).
    static func count(under directory: URL) -> Int {
        let prefix = resolved(directory.path) + "/"
        return paths().filter { $0.hasPrefix(prefix) }.count
    }

    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// The text of a NUL-terminated buffer as `fcntl(F_GETPATH)` fills it. Not `String(cString:)`
    /// on the array: that form is deprecated in Swift 6 (a warning, and the build allows none).
    /// Built on every platform, so the Linux build checks it too.
    static func path(fromNulTerminated buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func paths() -> [String] {
        #if os(Linux)
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
        #elseif canImport(Darwin)
        var found: [String] = []
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        for fd in 0..<getdtablesize() where fcntl(fd, F_GETPATH, &buffer) != -1 {
            found.append(path(fromNulTerminated: buffer))
        }
        return found
        #else
        return []
        #endif
    }
}
