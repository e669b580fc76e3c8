import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Measures what one small durable write costs on the scratch file system right now: the disk
/// is shared with other work, so benchmarks that sync report this beside their figures.
struct SyncProbe {
    let path: String

    init(directory: URL) throws {
        path = directory.appendingPathComponent("sync-probe").path
        guard FileManager.default.createFile(atPath: path, contents: Data()) else {
            throw BenchFailure("cannot create \(path)")
        }
    }

    /// Nanoseconds to append 200 bytes to the probe file and `fsync` it.
    func measure() throws -> Double {
        let fd = open(path, O_WRONLY | O_APPEND)
        guard fd >= 0 else { throw BenchFailure("cannot open \(path) (errno \(errno))") }
        defer { close(fd) }
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 199) + [UInt8(ascii: "\n")]
        let start = Stopwatch.now()
        let written = bytes.withUnsafeBytes { buffer in
            SystemCall.write(fd, buffer.baseAddress!, buffer.count)
        }
        let synced = fsync(fd)
        let elapsed = Stopwatch.now() - start
        guard written == bytes.count, synced == 0 else { throw BenchFailure("sync probe failed (errno \(errno))") }
        return Double(elapsed)
    }
}

/// The C calls whose names Swift types shadow.
enum SystemCall {
    /// The C `write`.
    static func write(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.write(fd, bytes, count)
        #elseif canImport(Musl)
            Musl.write(fd, bytes, count)
        #else
            Darwin.write(fd, bytes, count)
        #endif
    }
}
