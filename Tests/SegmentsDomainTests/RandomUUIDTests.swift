import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

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
}
