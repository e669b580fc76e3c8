import Foundation
import Testing
import SegmentsDomain
import SegmentsPersistence
import RealtimeSegments
import SegmentsTesting

/// Two integrations on one storage (an app passing the same folder or stores for two projects):
/// each uses only its own baseline and link memory (see Behaviour D1, C4, G1).
@Suite(Hang.timeLimit(minutes: 2)) struct SharedStorageTests {
    /// A client whose two integrations, A and B, share one set of stores.
    struct TwoIntegrations {
        let harness: ClientHarness
        let a: RecordingSegmentRepository
        let b: RecordingSegmentRepository

        init() {
            let stores = SegmentsClient.Options.Storage.custom(
                customer: InMemoryCustomerStore(), baseline: InMemorySegmentBaselineStore(), events: InMemoryEventQueueStore())
            harness = ClientHarness(storage: stores)
            a = harness.repository
            b = RecordingSegmentRepository(scheduler: harness.scheduler)
        }

        func configure(_ repository: RecordingSegmentRepository, id: String) async throws {
            try harness.client.configure(.init(backend: .custom(id: id, repository: repository, uploader: harness.uploader)))
            await harness.advance()
        }

        func read(force: Bool = false) async -> [Segment]? {
            let answer = Recorder<Result<[Segment], SegmentsError>>()
            harness.client.getSegments(force: force, category: .discovery()) { answer.record($0) }
            await harness.advance(by: 0.1)
            return try? answer.all.first?.get()
        }
    }

    @Test func g1_d1_aReadAfterSwitchingToAnotherIntegrationOnTheSameStorageIsNotAnsweredWithTheOthersSegments() async throws {
        let world = TwoIntegrations()
        world.a.answer([.discovery(): [Fixture.s1]])
        try await world.configure(world.a, id: "A")
        #expect(await world.read(force: true) == [Fixture.s1])

        try await world.configure(world.b, id: "B")
        #expect(await world.read() == [], "B's own answer, not A's cached [s1]")
        #expect(world.b.fetches.count == 1)
        #expect(world.harness.logger.messages.contains { $0.contains("belong to another integration") })

        // B's fetch replaced the shared file: back on A, within the cache time, A fetches its own.
        world.a.answer([.discovery(): [Fixture.s2]])
        try await world.configure(world.a, id: "A")
        #expect(await world.read() == [Fixture.s2])
        #expect(world.a.fetches.count == 2)
    }

    @Test func c4_idsLinkedForOneIntegrationAreLinkedAgainForAnotherOnTheSameStorage() async throws {
        let world = TwoIntegrations()
        try await world.configure(world.a, id: "A")
        try world.harness.client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        _ = await world.read(force: true)
        #expect(world.a.links.count == 1)

        try await world.configure(world.b, id: "B")
        _ = await world.read(force: true)
        #expect(world.b.links.map(\.hardIds) == [["registered": "jane"]], "B was never told who the cookie is")
    }

    @Test func d3_anotherIntegrationsAnswerCountsAsChangedEvenWhenTheSharedFileHoldsTheSameSegments() async throws {
        let world = TwoIntegrations()
        world.a.answer([.discovery(): [Fixture.s1]])
        world.b.answer([.discovery(): [Fixture.s1]])
        try await world.configure(world.a, id: "A")
        _ = await world.read(force: true)
        let told = Recorder<[Segment]>()
        world.harness.client.addListener(category: .discovery(), includeFirstLoad: false) { told.record($0) }
        await world.harness.advance(by: 6)
        #expect(told.all.isEmpty, "A's answer did not change")

        try await world.configure(world.b, id: "B")
        await world.harness.advance(by: 6)
        #expect(world.b.fetches.count == 1)
        #expect(told.all == [[Fixture.s1]], "B has no baseline of its own: every category of its answer changed (D3)")
    }
}
