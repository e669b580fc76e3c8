import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// A listener whose owner is gone counts for nothing (see Behaviour D7, A1, T7): anonymizing and a
/// failed fetch drop it first, so neither asks for a reload on its behalf.
@Suite(Hang.timeLimit(minutes: 1)) struct ReleasedOwnerPruningTests {
    typealias Base = SegmentationStateMachineTests
    typealias Machine = SegmentationStateMachine

    /// A configured machine whose only listener is owned by `owner`.
    private static func machine(ownedBy owner: AnyObject) -> Machine {
        var machine = Machine(timings: SegmentationTimings())
        _ = machine.addListener(
            SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil, owner: owner, at: Base.at(0))
        Base.configure(&machine)
        return machine
    }

    @Test func a1_d7_anonymizingDropsAListenerWhoseOwnerIsGoneAndAsksForNoReload() {
        var owner: NSObject? = NSObject()
        var machine = Self.machine(ownedBy: owner!)
        owner = nil
        let (_, actions) = machine.anonymize(newCookie: "new-cookie", at: Base.at(1))
        #expect(machine.listenerCount.registered == 0)
        #expect(!Base.describe(actions).contains { $0.hasPrefix("timer") })
        #expect(Base.describe(machine.reload) == "idle")
    }

    @Test func t7_d7_aFailedFetchDropsAListenerWhoseOwnerIsGoneAndRetriesForNobody() throws {
        var owner: NSObject? = NSObject()
        var machine = Self.machine(ownedBy: owner!)
        _ = Base.request(&machine, at: 0)
        _ = machine.timerFired(try #require(machine.currentTimer), at: Base.at(5))
        let flight = try #require(Base.flight(machine))
        owner = nil
        let busy = SegmentsError(.httpStatus, "busy", httpStatus: 503)
        let actions = machine.flightFinished(flight.id, with: .failure(busy), at: Base.at(6))
        #expect(machine.listenerCount.registered == 0)
        #expect(!Base.describe(actions).contains { $0.hasPrefix("timer") })
        #expect(Base.describe(machine.reload) == "idle")
    }
}
