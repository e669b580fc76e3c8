import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The ids `trackEvent` gives its items (see Behaviour E4: an item keeps its id across restarts,
/// and a removal or update names it): random version 4 UUIDs, never handed out twice, though the
/// kernel's randomness is read in batches (see Behaviour R2: the caller's cost).
@Suite(Hang.timeLimit(minutes: 1)) struct RandomUUIDTests {
    /// The version nibble (4) and the RFC 4122 variant bits (`10`) of `id`.
    private static func isVersion4(_ id: UUID) -> Bool {
        let bytes = id.uuid
        return bytes.6 >> 4 == 4 && bytes.8 >> 6 == 0b10
    }

    @Test func e4_idsAreVersion4AndDistinctAcrossManyBatches() {
        // 5,000 ids span about twenty batches of kernel randomness.
        let ids = (0..<5_000).map { _ in RandomUUID.next() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy(Self.isVersion4))
    }

    @Test func e4_idsMadeOnEightThreadsAtOnceAreAllDistinct() {
        let made = Locked<[UUID]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let mine = (0..<2_000).map { _ in RandomUUID.next() }
            made.withLock { $0 += mine }
        }
        let ids = made.value
        #expect(ids.count == 16_000)
        #expect(Set(ids).count == ids.count, "a batch's bytes were handed out twice")
    }

    @Test(arguments: [
        (UInt8(0x00), "00000000-0000-4000-8000-000000000000"),
        (0xFF, "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF"),
        (0x5A, "5A5A5A5A-5A5A-4A5A-9A5A-5A5A5A5A5A5A"),
    ])
    func e4_onlyTheVersionAndVariantBitsChangeTheRandomBytes(_ byte: UInt8, _ expected: String) {
        let random: uuid_t = (byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte)
        let id = RandomUUID.uuid(fromRandom: random)
        #expect(id.uuidString == expected)
        #expect(Self.isVersion4(id))
    }

    #if os(Linux)
        /// This thread's count of bytes read with `read(2)` and of its `read` calls since it started,
        /// from `/proc/thread-self/io`, as they were before this read of that file (`own`: the bytes of
        /// that read, which the next count includes with its one call).
        private static func threadReads() -> (bytes: Int, calls: Int, own: Int)? {
            let fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            guard got > 0 else { return nil }
            var counters: [Substring: Int] = [:]
            for line in String(decoding: buffer[..<got], as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: ":")
                if parts.count == 2 { counters[parts[0]] = Int(parts[1].trimmingCharacters(in: .whitespaces)) }
            }
            guard let bytes = counters["rchar"], let calls = counters["syscr"] else { return nil }
            return (bytes, calls, got)
        }

        /// The bytes this thread read while `body` ran, and its `read` calls.
        private static func reads(during body: () -> Void) throws -> (bytes: Int, calls: Int) {
            let before = try #require(threadReads())
            body()
            let after = try #require(threadReads())
            return (after.bytes - before.bytes - before.own, after.calls - before.calls - 1)
        }

        /// The pool behind `next()` (see Behaviour R2: the caller's cost): the kernel's randomness
        /// is read 4 KiB at a time and a read serves 256 ids, so on one thread the calls that read
        /// are 256 calls apart. Tests running at the same time (tracking takes ids from the same pool)
        /// can only shorten a run, so a few tries are allowed to see one whole run.
        /// It needs the kernel's per-thread I/O accounting (`/proc/thread-self/io`); a kernel built
        /// without it skips the test, saying so, rather than failing it.
        @Test(.enabled(if: FileManager.default.isReadableFile(atPath: "/proc/thread-self/io"), "needs /proc/thread-self/io"))
        func r2_theKernelsRandomnessIsRead4KiBAtATimeAndEachReadServes256Ids() throws {
            let nothing = try Self.reads {}
            #expect(nothing.bytes == 0 && nothing.calls == 0, "reading the counters counts no other read")
            var readSizes: Set<Int> = []
            var runs: [Int] = []
            for _ in 0..<20 where !runs.contains(256) {
                var reading: [Int] = []
                for call in 0..<600 {
                    let read = try Self.reads { _ = RandomUUID.next() }
                    if read.bytes != 0 || read.calls != 0 {
                        reading.append(call)
                        readSizes.insert(read.bytes)
                    }
                }
                runs += zip(reading.dropFirst(), reading).map { $0 - $1 }
            }
            #expect(readSizes == [4096], "bytes read by the calls that read")
            let sawWholeRun = runs.contains(256)
            #expect(sawWholeRun, "calls from one read to the next: \(runs.prefix(20))")
        }
    #endif
}
