import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour M4 and the threading promises of registration.
@Suite(Hang.timeLimit(minutes: 2)) struct ListenerRegistrationTests {
    @Test func m4_theSameGroupTwiceIsTwoRegistrationsAndRemovingTheGroupRemovesBoth() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let group = UUID()
        let (first, _) = harness.listen(includeFirstLoad: true, group: group)
        let (second, _) = harness.listen(includeFirstLoad: true, group: group)
        #expect(harness.engine.listenerCount == 2)
        await harness.advance(by: 5)
        #expect(first.count == 1 && second.count == 1)
        harness.engine.removeListeners(group: group)
        harness.engine.removeListeners(group: UUID())  // unknown: no-op
        #expect(harness.engine.listenerCount == 0)
    }

    /// One registration of a group removed by its token, then the group: the group removes the
    /// rest and nothing else, and a later registration under the same group is a new member.
    @Test func m4_removingOneMemberByTokenThenItsGroupRemovesTheRest() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1], .content(): [Fixture.s3]])
        harness.configure()
        let group = UUID()
        let (first, firstToken) = harness.listen(.discovery(), group: group)
        let (second, _) = harness.listen(.content(), group: group)
        let (outsider, _) = harness.listen(.discovery())
        harness.engine.removeListener(firstToken)
        #expect(harness.engine.listenerCount == 2)
        harness.engine.removeListeners(group: group)
        #expect(harness.engine.listenerCount == 1)  // only the outsider is left
        await harness.advance(by: 5)
        #expect(first.count == 0 && second.count == 0)
        #expect(outsider.all == [[Fixture.s1]])

        let (again, _) = harness.listen(.content(), group: group)
        #expect(harness.engine.listenerCount == 2)
        harness.engine.removeListeners(group: group)
        #expect(harness.engine.listenerCount == 1)
        harness.repository.answer([.discovery(): [Fixture.s2], .content(): [Fixture.s1]])
        _ = harness.read(force: true)
        await harness.advance()
        #expect(again.count == 0)
        #expect(outsider.all == [[Fixture.s1], [Fixture.s2]])
    }

    @Test func m4_aListenerTiedToAnOwnerEndsWithTheOwner() async {
        final class Owner {}
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let recorder = Recorder<[Segment]>()
        var owner: Owner? = Owner()
        harness.engine.addListener(
            SegmentListener(category: .discovery(), includeFirstLoad: true) { recorder.record($0) }, owner: owner)
        #expect(harness.engine.listenerCount == 1)
        owner = nil
        #expect(harness.engine.listenerCount == 0)
        await harness.advance(by: 60)
        #expect(recorder.count == 0)
        #expect(harness.fetchCount == 0)  // with no live listener the debounce does no work (T7)
    }

    @Test func m4_addThenRemoveOnOneThreadNeverLeavesTheListenerRegistered() async {
        let harness = EngineHarness()
        harness.configure()
        DispatchQueue.concurrentPerform(iterations: 2000) { _ in
            let token = harness.engine.addListener(SegmentListener(category: .content(), includeFirstLoad: false) { _ in })
            harness.engine.removeListener(token)
        }
        #expect(harness.engine.listenerCount == 0)
    }

    @Test func m4_registrationsFromOneThreadKeepCallOrder() async {
        let harness = EngineHarness()
        harness.repository.answer([.content(): [Fixture.s1]])
        harness.configure()
        let order = Recorder<Int>()
        let registrar = DispatchQueue(label: "registrar")
        for index in 0..<200 {
            registrar.async {
                harness.engine.addListener(SegmentListener(category: .content(), includeFirstLoad: true) { _ in
                    order.record(index)
                })
            }
        }
        await drained(registrar)
        await harness.advance(by: 5)
        #expect(order.all == Array(0..<200))
    }

    @Test func m4_aChangeStreamYieldsChangesAndEndsItsRegistration() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        var iterator: AsyncStream<[Segment]>.Iterator? = harness.engine.changes(of: .discovery(), includeFirstLoad: true)
            .makeAsyncIterator()
        await harness.advance(by: 5)
        let first = await iterator?.next()
        #expect(first == [Fixture.s1])
        #expect(harness.engine.listenerCount == 1)
        iterator = nil
        #expect(harness.engine.listenerCount == 0)
    }
}
