import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// A debounce of 0 s has nothing to wait for (see Behaviour T5): a request starts the reload at
/// once, with no timer, as a first attempt.
@Suite(Hang.timeLimit(minutes: 1)) struct ZeroDebounceTests {
    typealias Base = SegmentationStateMachineTests

    @Test func t5_aRequestWithADebounceOfZeroFetchesAtOnceWithoutATimer() throws {
        var machine = SegmentationStateMachine(timings: SegmentationTimings(debounce: DebouncePolicy(delay: 0, maxWait: 30)))
        _ = machine.addListener(
            SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil, owner: nil, at: Base.at(0))
        Base.configure(&machine)
        #expect(Base.flight(machine) == nil)  // no first load wanted: nothing in flight yet
        #expect(Base.describe(Base.request(&machine, at: 1)) == ["fetch"])
        let flight = try #require(Base.flight(machine))
        // A first attempt: its failure waits the first retry delay.
        let busy = SegmentsError(.httpStatus, "busy", httpStatus: 503)
        #expect(Base.describe(machine.flightFinished(flight.id, with: .failure(busy), at: Base.at(2))) == ["timer(2.0)"])
    }
}
