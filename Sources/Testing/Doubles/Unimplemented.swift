import Foundation
import SegmentsDomain

/// Where an `Unimplemented…` double was made: the line of the test that a failure points to.
struct CreationSite: Sendable {
    private let site: TestSourceSite

    init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
        site = TestSourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Reports a call to the double made here that a test did not expect: it fails the running
    /// test at this site, under Swift Testing and under XCTest alike (SPEC X4); with
    /// neither, it writes the message on standard error. The message names this site too: the
    /// call itself comes from inside the SDK, where no test line is to be seen.
    func reportUnimplemented(_ what: String, on double: String) {
        site.fail("Unimplemented: \(what) was called on the \(double) made at \(site.fileID):\(site.line)")
    }
}

/// A ``SegmentsClock`` for tests that must not read the time: any call fails the test.
public struct UnimplementedClock: SegmentsClock {
    private let site: CreationSite

    /// Creates the double; a call to it fails the test at the line that created it (the defaults
    /// capture it) and names that line.
    public init(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        site = CreationSite(fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Fails the test and returns the distant past.
    public func now() -> Date {
        site.reportUnimplemented("SegmentsClock.now()", on: "UnimplementedClock")
        return .distantPast
    }
    /// Fails the test and returns 0.
    public func uptime() -> TimeInterval {
        site.reportUnimplemented("SegmentsClock.uptime()", on: "UnimplementedClock")
        return 0
    }
}

/// A ``SegmentsScheduler`` for tests that must not schedule anything: any call fails the test.
public struct UnimplementedScheduler: SegmentsScheduler {
    private let site: CreationSite

    /// Creates the double; a call to it fails the test at the line that created it (the defaults
    /// capture it) and names that line.
    public init(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        site = CreationSite(fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Fails the test; the work never runs.
    @discardableResult
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        site.reportUnimplemented("SegmentsScheduler.schedule(after: \(delay))", on: "UnimplementedScheduler")
        return ScheduledWork {}
    }
    /// Fails the test and returns at once.
    public func sleep(for delay: TimeInterval) async {
        site.reportUnimplemented("SegmentsScheduler.sleep(for: \(delay))", on: "UnimplementedScheduler")
    }
}

/// A ``SegmentRepository`` for tests that must not reach the backend: any call fails the test
/// and throws.
public struct UnimplementedSegmentRepository: SegmentRepository {
    private let site: CreationSite

    /// Creates the double; a call to it fails the test at the line that created it (the defaults
    /// capture it) and names that line.
    public init(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        site = CreationSite(fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Fails the test and throws `.notConfigured`.
    public func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
        site.reportUnimplemented("SegmentRepository.fetchSegments", on: "UnimplementedSegmentRepository")
        throw SegmentsError(.notConfigured, "unimplemented repository")
    }
    /// Fails the test and throws `.notConfigured`.
    public func linkCustomerIds(_ customer: CustomerIds) async throws {
        site.reportUnimplemented("SegmentRepository.linkCustomerIds", on: "UnimplementedSegmentRepository")
        throw SegmentsError(.notConfigured, "unimplemented repository")
    }
}

/// An ``EventUploader`` for tests that must not upload: any call fails the test and throws.
public struct UnimplementedEventUploader: EventUploader {
    private let site: CreationSite

    /// Creates the double; a call to it fails the test at the line that created it (the defaults
    /// capture it) and names that line.
    public init(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        site = CreationSite(fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Fails the test and throws `.notConfigured`.
    public func upload(_ event: TrackedEvent) async throws {
        site.reportUnimplemented("EventUploader.upload", on: "UnimplementedEventUploader")
        throw SegmentsError(.notConfigured, "unimplemented uploader")
    }
}
