import Foundation
import SegmentsDomain

#if canImport(Testing)
    import Testing
#endif

/// Reports a call to a double that a test did not expect: a test issue under Swift Testing,
/// otherwise a message on standard error.
func reportUnimplemented(_ what: String) {
    #if canImport(Testing)
        Issue.record("Unimplemented: \(what) was called")
    #else
        FileHandle.standardError.write(Data("Unimplemented: \(what) was called\n".utf8))
    #endif
}

/// A ``SegmentsClock`` for tests that must not read the time: any call fails the test.
public struct UnimplementedClock: SegmentsClock {
    /// Creates the double.
    public init() {}
    /// Fails the test and returns the distant past.
    public func now() -> Date {
        reportUnimplemented("SegmentsClock.now()")
        return .distantPast
    }
    /// Fails the test and returns 0.
    public func uptime() -> TimeInterval {
        reportUnimplemented("SegmentsClock.uptime()")
        return 0
    }
}

/// A ``SegmentsScheduler`` for tests that must not schedule anything: any call fails the test.
public struct UnimplementedScheduler: SegmentsScheduler {
    /// Creates the double.
    public init() {}
    /// Fails the test; the work never runs.
    @discardableResult
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        reportUnimplemented("SegmentsScheduler.schedule(after: \(delay))")
        return ScheduledWork {}
    }
    /// Fails the test and returns at once.
    public func sleep(for delay: TimeInterval) async {
        reportUnimplemented("SegmentsScheduler.sleep(for: \(delay))")
    }
}

/// A ``SegmentRepository`` for tests that must not reach the backend: any call fails the test
/// and throws.
public struct UnimplementedSegmentRepository: SegmentRepository {
    /// Creates the double.
    public init() {}
    /// Fails the test and throws `.notConfigured`.
    public func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
        reportUnimplemented("SegmentRepository.fetchSegments")
        throw SegmentsError(.notConfigured, "unimplemented repository")
    }
    /// Fails the test and throws `.notConfigured`.
    public func linkCustomerIds(_ customer: CustomerIds) async throws {
        reportUnimplemented("SegmentRepository.linkCustomerIds")
        throw SegmentsError(.notConfigured, "unimplemented repository")
    }
}

/// An ``EventUploader`` for tests that must not upload: any call fails the test and throws.
public struct UnimplementedEventUploader: EventUploader {
    /// Creates the double.
    public init() {}
    /// Fails the test and throws `.notConfigured`.
    public func upload(_ event: TrackedEvent) async throws {
        reportUnimplemented("EventUploader.upload")
        throw SegmentsError(.notConfigured, "unimplemented uploader")
    }
}
