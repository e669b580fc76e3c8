import Foundation

/// The bytes of a journal line being written by ``JournalLineWriter``: appended through a pointer
/// into one buffer, grown by doubling, and handed to `Data` without a copy.
///
/// A line is made of many small appends (literals, ids, numbers, strings) on the caller's thread of
/// `trackEvent` (<doc:Behaviour#R2>), where an array's per-append checks and the copy into `Data`
/// cost more than the bytes. Noncopyable, so the buffer has exactly one owner: it is freed by
/// `deinit`, or by the `Data` that ``data()`` gives it to.
struct LineBytes: ~Copyable {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    /// How many bytes were written.
    private(set) var count = 0

    /// An empty line with room for `capacity` bytes before it grows.
    init(capacity: Int = 512) {
        self.capacity = max(capacity, 16)
        base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 1)
    }

    deinit {
        base.deallocate()
    }

    /// Appends one byte.
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: 1) }
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Appends `bytes`.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if capacity - count < bytes.count { grow(toHold: bytes.count) }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends `bytes`.
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(UnsafeRawBufferPointer(bytes))
    }

    /// Appends `bytes`.
    mutating func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The bytes written, as `Data` that now owns the buffer.
    consuming func data() -> Data {
        let data = Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
        discard self
        return data
    }

    /// The bytes written, for a look that must not keep them.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    private mutating func grow(toHold extra: Int) {
        var newCapacity = capacity * 2
        while newCapacity - count < extra { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 1)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}
