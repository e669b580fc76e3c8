#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Which directory a path names, as the file system sees it: its device and inode.
///
/// Two paths that name one directory — a symbolic link, or on a case-insensitive volume (APFS and
/// HFS+ by default) two spellings that differ only in letter case — have one identity, which a
/// comparison of path strings cannot see (<doc:Behaviour#P5>, <doc:Behaviour#P10>).
package struct DirectoryIdentity: Hashable, Sendable {
    /// The device (`st_dev`).
    package let device: UInt64
    /// The inode on that device (`st_ino`).
    package let inode: UInt64

    /// The identity of `device` and `inode`.
    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The identity of the directory at `path` (a symbolic link is followed), or `nil` when there
    /// is none there or it is not a directory.
    package static func of(_ path: String) -> DirectoryIdentity? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return DirectoryIdentity(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }

    /// The identity of the directory at `path` itself, not following a symbolic link: `nil` for a
    /// link, a file or nothing.
    static func ofEntry(_ path: String) -> DirectoryIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return DirectoryIdentity(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }

    /// Creates the directory at `path` and its missing parents, owner-only, as the stores would;
    /// a failure is left for the stores to report when they use the directory.
    package static func createDirectory(_ path: String) {
        try? StorageDirectory(url: URL(fileURLWithPath: path, isDirectory: true)).create()
    }
}
