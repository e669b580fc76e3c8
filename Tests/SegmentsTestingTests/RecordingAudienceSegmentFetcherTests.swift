import SegmentsDomain
import SegmentsTesting
import Testing

/// The recording audience fetcher of the test kit (issue 14, items 3 and 5).
@Suite(Hang.timeLimit(minutes: 2)) struct RecordingAudienceSegmentFetcherTests {
    static let user = AudienceIdentifier(field: .fsUserId, value: "user123")

    @Test func o1_callsRecordTheirOptions() async throws {
        let fetcher = RecordingAudienceSegmentFetcher()
        _ = try await fetcher.fetchQualifiedSegments(for: Self.user, candidates: ["a"], options: [.ignoreCache])
        _ = try await fetcher.fetchQualifiedSegments(for: Self.user, candidates: ["a"])
        #expect(fetcher.calls == [
            .init(identifier: Self.user, candidates: ["a"], options: [.ignoreCache]),
            .init(identifier: Self.user, candidates: ["a"]),
        ])
    }

    @Test func o1_answersKeepOnlyCandidatesUnlessToldToAnswerAFixedList() async throws {
        let fetcher = RecordingAudienceSegmentFetcher()
        fetcher.answer(["seg-2", "other", "seg-1"])
        #expect(try await fetcher.fetchQualifiedSegments(for: Self.user, candidates: ["seg-1", "seg-2"]) == ["seg-2", "seg-1"])
        fetcher.filtersByCandidates = false
        #expect(try await fetcher.fetchQualifiedSegments(for: Self.user, candidates: ["seg-1"]) == ["seg-2", "other", "seg-1"])
        fetcher.answerNextFetch(with: ["fixed"])
        #expect(try await fetcher.fetchQualifiedSegments(for: Self.user, candidates: ["seg-1"]) == ["fixed"])
    }
}
