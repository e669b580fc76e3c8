import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// ODP audiences as a segment repository (see Behaviour O5).
@Suite(Hang.timeLimit(minutes: 2)) struct ODPAudienceRepositoryTests {
    @Test func o5_qualifiedAudiencesAreOneCategoryOfSegments() async throws {
        let fetcher = RecordingAudienceSegmentFetcher()
        fetcher.answer(["seg-2", "seg-1"])
        let repository = ODPAudienceRepository(fetcher: fetcher, candidates: ["seg-1", "seg-2", "seg-3"])
        let answer = try await repository.fetchSegments(for: identified)
        #expect(answer == [.audiences(): [
            Segment(id: "seg-2", segmentationId: "odp"), Segment(id: "seg-1", segmentationId: "odp"),
        ]])
        #expect(fetcher.calls == [.init(identifier: AudienceIdentifier(userId: "jane@example.com"),
                                        candidates: ["seg-1", "seg-2", "seg-3"])])
    }

    @Test func o5_theCategoryIsConfigurable() async throws {
        let fetcher = RecordingAudienceSegmentFetcher()
        fetcher.answer(["a"])
        let repository = ODPAudienceRepository(fetcher: fetcher, candidates: ["a"], category: .discovery())
        #expect(try await repository.fetchSegments(for: anonymous).keys.map(\.name) == ["discovery"])
    }

    @Test func o4_o5_noCandidatesAnswerAnEmptyCategoryWithoutARequest() async throws {
        let fetcher = RecordingAudienceSegmentFetcher()
        let repository = ODPAudienceRepository(fetcher: fetcher, candidates: [])
        #expect(try await repository.fetchSegments(for: anonymous) == [.audiences(): []])
        #expect(fetcher.callCount == 0)
    }

    @Test(arguments: [
        // (customer ids) → (field, value)
        (["cookie": "c1"], "vuid", "vuid_c1"),
        (["cookie": "vuid_c1"], "vuid", "vuid_c1"),
        (["cookie": "c1", "registered": "jane@example.com"], "fs_user_id", "jane@example.com"),
        (["cookie": "c1", "registered": "r", "fs_user_id": "f"], "fs_user_id", "f"),
        (["cookie": "c1", "vuid": "vuid_v", "registered": "r"], "vuid", "vuid_v"),
        (["cookie": "c1", "registered": ""], "vuid", "vuid_c1"),
    ] as [([String: String], String, String)])
    func o5_customersAreIdentifiedByTheirUserIdElseTheirCookie(ids: [String: String], field: String, value: String) {
        let identifier = ODPAudienceRepository.defaultIdentification(CustomerIds(ids))
        #expect(identifier?.field.rawValue == field)
        #expect(identifier?.value == value)
    }

    @Test func o5_aCustomerWithoutAnyIdIsAnInvalidIdentifier() async {
        let fetcher = RecordingAudienceSegmentFetcher()
        let repository = ODPAudienceRepository(fetcher: fetcher, candidates: ["a"])
        let error = await segmentsError { _ = try await repository.fetchSegments(for: CustomerIds([:])) }
        #expect(error?.code == .invalidIdentifier)
        #expect(fetcher.callCount == 0)
    }

    @Test func o5_linkingIsANoOpAndSendsNothing() async throws {
        let transport = RecordingTransport()
        let repository = ODPAudienceRepository(
            configuration: ODPConfiguration(apiKey: "k"), transport: transport, clock: FixedClock(date: Harness.now),
            candidates: ["a"])
        try await repository.linkCustomerIds(identified)
        #expect(transport.requests.isEmpty)
    }

    @Test func o5_errorsOfTheBackendPassThrough() async {
        let fetcher = RecordingAudienceSegmentFetcher()
        fetcher.failNextFetches(with: SegmentsError(.invalidIdentifier, "unknown"))
        let repository = ODPAudienceRepository(fetcher: fetcher, candidates: ["a"])
        #expect(await segmentsError { _ = try await repository.fetchSegments(for: anonymous) }?.code == .invalidIdentifier)
    }
}
