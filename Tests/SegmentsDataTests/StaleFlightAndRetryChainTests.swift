import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// A flight's bookkeeping on the state machine: a read during a retry's wait continues the retry
/// chain (see Behaviour T7, G2), and a flight that no longer counts never proceeds (C2).
@Suite(Hang.timeLimit(minutes: 1)) struct StaleFlightAndRetryChainTests {
    typealias Base = SegmentationStateMachineTests
    static let busy = SegmentsError(.httpStatus, "busy", httpStatus: 503)

    @Test func t7_g2_aReadDuringARetryWaitKeepsTheAttemptCount() throws {
        var machine = Base.fetching()
        let first = try #require(Base.flight(machine))
        #expect(Base.describe(machine.flightFinished(first.id, with: .failure(Self.busy), at: Base.at(7))) == ["timer(2.0)"])
        let (_, readActions) = machine.read(.discovery(), force: true, reply: .direct { _ in }, at: Base.at(8))
        #expect(Base.describe(readActions) == ["cancelTimer", "fetch"])
        let second = try #require(Base.flight(machine))
        // The read is answered with the failure; the second failure in a row waits twice as long.
        #expect(Base.describe(machine.flightFinished(second.id, with: .failure(Self.busy), at: Base.at(9))) == ["answer(1, failure)", "timer(4.0)"])
    }

    @Test func c2_aFlightOfAStoppedEngineDoesNotProceed() throws {
        var machine = Base.fetching()
        let flight = try #require(Base.flight(machine))
        #expect(machine.beforeRequest(of: flight.id, linked: false, at: Base.at(6)).0 == .send)
        _ = machine.stop()
        #expect(machine.beforeRequest(of: flight.id, linked: false, at: Base.at(7)).0 == .abandon)
    }

    @Test func c2_anUnknownFlightDoesNotProceed() throws {
        var machine = Base.fetching()
        let flight = try #require(Base.flight(machine))
        #expect(machine.beforeRequest(of: flight.id + 1, linked: false, at: Base.at(6)).0 == .abandon)
    }
}
