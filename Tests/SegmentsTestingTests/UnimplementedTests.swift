import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The `Unimplemented…` doubles fail the test that reaches them and say which double it was: the
/// call comes from inside the SDK, so the failure points to the line that made the double.
@Suite(Hang.timeLimit(minutes: 2)) struct UnimplementedTests {
    /// The issues recorded while `body` runs, expected as known issues: each must be an
    /// `Unimplemented:` report (any other issue fails the test as usual).
    private func unimplementedIssues(_ body: () async -> Void) async -> [Issue] {
        let issues = LockedValue<[Issue]>([])
        await withKnownIssue {
            await body()
        } matching: { issue in
            guard issue.comments.contains(where: { $0.rawValue.hasPrefix("Unimplemented:") }) else { return false }
            issues.withLock { $0.append(issue) }
            return true
        }
        return issues.value
    }

    private let file = "SegmentsTestingTests/UnimplementedTests.swift"

    @Test func aCallFailsTheTestAtTheLineThatMadeTheDoubleAndNamesIt() async {
        let (clock, line) = (UnimplementedClock(), #line)
        let issues = await unimplementedIssues { _ = clock.now() }
        #expect(issues.count == 1)
        #expect(issues.first?.comments.map(\.rawValue) == [
            "Unimplemented: SegmentsClock.now() was called on the UnimplementedClock made at \(file):\(line)"
        ])
        #expect(issues.first?.sourceLocation?.fileID == file)
        #expect(issues.first?.sourceLocation?.line == line)
    }

    @Test func everyUnimplementedDoubleNamesWhereItWasMade() async {
        let (scheduler, schedulerLine) = (UnimplementedScheduler(), #line)
        let (repository, repositoryLine) = (UnimplementedSegmentRepository(), #line)
        let (uploader, uploaderLine) = (UnimplementedEventUploader(), #line)
        let event = TrackedEvent(
            kind: .event(type: "purchase"), customerIds: CustomerIds(cookie: "c"), properties: [:], timestamp: Date())
        let issues = await unimplementedIssues {
            await scheduler.sleep(for: 1)
            _ = try? await repository.fetchSegments(for: CustomerIds(cookie: "c"))
            try? await uploader.upload(event)
        }
        #expect(issues.map(\.comments).map { $0.map(\.rawValue) } == [
            ["Unimplemented: SegmentsScheduler.sleep(for: 1.0) was called on the UnimplementedScheduler made at \(file):\(schedulerLine)"],
            ["Unimplemented: SegmentRepository.fetchSegments was called on the UnimplementedSegmentRepository made at \(file):\(repositoryLine)"],
            ["Unimplemented: EventUploader.upload was called on the UnimplementedEventUploader made at \(file):\(uploaderLine)"],
        ])
        #expect(issues.map { $0.sourceLocation?.line } == [schedulerLine, repositoryLine, uploaderLine])
    }
}
