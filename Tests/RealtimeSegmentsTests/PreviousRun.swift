import Foundation
import RealtimeSegments
@testable import SegmentsPersistence

/// What a previous run of the app left in a storage folder: its customer and one queued event
/// (type `before-the-restart`), written by the file stores themselves and synced.
enum PreviousRun {
    static func write(customer: CustomerIds, to directory: URL, logger: any SegmentsLogger) throws {
        try FileCustomerStore(directory: directory, logger: logger).save(customer)
        let queue = FileEventQueueStore(directory: directory, logger: logger)
        try queue.append(
            TrackedEvent(
                kind: .event(type: "before-the-restart"), customerIds: customer, properties: [:],
                timestamp: Date(timeIntervalSinceReferenceDate: 1)))
        try queue.sync()
    }
}
