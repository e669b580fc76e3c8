import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The pipeline's floors and its take-over of an item (see Behaviour E3, E6, A4).
@Suite(Hang.timeLimit(minutes: 1)) struct PipelineLimitsAndAdoptionTests {
    typealias Harness = TrackingPipelineTests.Harness

    /// A cap below one still lets one item wait, and an item gets at least one upload attempt
    /// before it counts as failed for good.
    @Test(arguments: [-5, 0, 1])
    func e3_e6_theCapAndThePermanentFailureLimitAreAtLeastOne(value: Int) {
        let dependencies = TrackingPipeline.Dependencies(
            client: ClientPorts(runtime: SegmentsRuntime(scheduler: TestScheduler())), maxPermanentFailures: value, capacity: value)
        #expect(dependencies.capacity == 1)
        #expect(dependencies.maxPermanentFailures == 1)
    }

    @Test func e6_aPipelineWithACapOfOneHoldsOneItemAndRefusesTheNext() throws {
        let harness = Harness(mode: .manual, capacity: 1)
        try harness.pipeline.track(eventType: "first", properties: [:], timestamp: nil, customer: Fixture.customerA)
        #expect(throws: SegmentsError.self) {
            try harness.pipeline.track(eventType: "second", properties: [:], timestamp: nil, customer: Fixture.customerA)
        }
        #expect(harness.pipeline.queuedCount == 1)
    }

    /// An item the pipeline before this one wrote to the same store after it had stopped is queued
    /// here too (it is on disk already, so it is not written again).
    @Test func a4_anAdoptedItemIsQueuedForUpload() {
        let harness = Harness(mode: .manual)
        let event = TrackedEvent(kind: .event(type: "late"), customerIds: Fixture.customerA, properties: [:], timestamp: Date())
        harness.pipeline.adopt(event)
        #expect(harness.pipeline.queuedCount == 1)
    }
}
