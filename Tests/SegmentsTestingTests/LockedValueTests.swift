import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The lock the test kit ships for users' own doubles.
@Suite(Hang.timeLimit(minutes: 2)) struct LockedValueTests {
    /// A user's double, `Sendable` without `@unchecked`: its state is all in a `LockedValue`.
    final class Told: Sendable {
        private let lists = LockedValue<[[Segment]]>([])
        func record(_ list: [Segment]) { lists.withLock { $0.append(list) } }
        var all: [[Segment]] { lists.value }
    }

    @Test func concurrentChangesAreNeverLost() async {
        let count = LockedValue(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1_000 { count.withLock { $0 += 1 } } }
            }
        }
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in count.withLock { $0 += 1 } }
        #expect(count.value == 9_000)
    }

    @Test func withLockReturnsWhatItsBodyReturnsAndKeepsItsChanges() throws {
        let names = LockedValue(["a"])
        let size = names.withLock { names -> Int in
            names.append("b")
            return names.count
        }
        #expect(size == 2)
        #expect(names.value == ["a", "b"])
        struct Refused: Error {}
        #expect(throws: Refused.self) { try names.withLock { _ in throw Refused() } }
        #expect(names.value == ["a", "b"])
    }

    @Test func aDoubleKeepsEverythingItIsToldFromManyThreadsAtOnce() {
        let told = Told()
        let segment = Segment(id: "s1", segmentationId: "g1")
        DispatchQueue.concurrentPerform(iterations: 2_000) { index in
            told.record(index.isMultiple(of: 2) ? [segment] : [])
        }
        #expect(told.all.count == 2_000)
        #expect(told.all.filter { $0 == [segment] }.count == 1_000)
    }
}
