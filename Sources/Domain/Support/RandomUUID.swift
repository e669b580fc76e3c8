import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Random (version 4) UUIDs for the items `trackEvent` queues, made cheaply on the caller's thread
/// (<doc:Behaviour#R2>).
///
/// On Apple platforms this is `UUID()`, which draws from `arc4random_buf` in the process. On Linux,
/// Foundation's `UUID()` opens, reads and closes `/dev/urandom` for every id — three system calls,
/// about 3 µs on the benchmark machine, more than the journal's own `write`. Here the same kernel
/// randomness is read 4 KiB at a time (256 ids per read), outside any lock, and handed out 16 bytes
/// per id; the version and variant bits are set as `UUID()` sets them. A child process made by
/// `fork` forgets the bytes its parent had read (a `pthread_atfork` handler), so the two never
/// hand out the same id.
package enum RandomUUID {
    /// A new random UUID.
    package static func next() -> UUID {
        #if canImport(Glibc) || canImport(Musl)
            if let id = Pool.shared.take() { return id }
            guard let fresh = Pool.kernelRandom(count: Pool.batchSize) else { return UUID() }
            return Pool.shared.refill(with: fresh)
        #else
            return UUID()
        #endif
    }

    /// Sets the version (4) and variant (RFC 4122) bits of 16 random bytes.
    package static func uuid(fromRandom bytes: uuid_t) -> UUID {
        var raw = bytes
        raw.6 = (raw.6 & 0x0F) | 0x40
        raw.8 = (raw.8 & 0x3F) | 0x80
        return UUID(uuid: raw)
    }

    #if canImport(Glibc) || canImport(Musl)
        /// Random bytes read from the kernel and not handed out yet.
        private final class Pool: Sendable {
            static let batchSize = 4096
            static let shared: Pool = {
                let pool = Pool()
                // A forked child must not hand out the ids its parent still holds.
                pthread_atfork(nil, nil, { Pool.forked = true })
                return pool
            }()

            private struct Bytes: Sendable {
                var bytes: [UInt8] = []
                var next = 0
            }

            private let state = Locked(Bytes())
            /// Set in a forked child only, where one thread runs while the handler does.
            nonisolated(unsafe) private static var forked = false

            /// The next id from the bytes held, or `nil` when they are used up.
            func take() -> UUID? {
                state.withLock { state in
                    if Self.forked {
                        Self.forked = false
                        state = Bytes()
                    }
                    guard state.next + 16 <= state.bytes.count else { return nil }
                    defer { state.next += 16 }
                    return Self.uuid(state.bytes, at: state.next)
                }
            }

            /// Holds `fresh` and hands out its first id. What another thread put there meanwhile is
            /// replaced; its bytes were never handed out.
            func refill(with fresh: [UInt8]) -> UUID {
                state.withLock { state in
                    state = Bytes(bytes: fresh, next: 16)
                    return Self.uuid(fresh, at: 0)
                }
            }

            private static func uuid(_ bytes: [UInt8], at offset: Int) -> UUID {
                let raw: uuid_t = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: uuid_t.self) }
                return RandomUUID.uuid(fromRandom: raw)
            }

            /// `count` bytes of the kernel's randomness, or `nil` when `/dev/urandom` cannot be read.
            static func kernelRandom(count: Int) -> [UInt8]? {
                let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { return nil }
                defer { close(fd) }
                var bytes = [UInt8](repeating: 0, count: count)
                var filled = 0
                while filled < count {
                    let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
                    if got < 0, errno == EINTR { continue }
                    guard got > 0 else { return nil }
                    filled += got
                }
                return bytes
            }
        }
    #endif
}
