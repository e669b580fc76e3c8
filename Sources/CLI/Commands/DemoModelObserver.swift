import Foundation
import Observation
import SegmentsDomain
import RealtimeSegments

/// What `segments demo` prints: each change of a `SegmentsModel`'s categories, seen through
/// observation as a SwiftUI view would see it (Behaviour M5), handed to the watcher that prints it.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
final class DemoModelObserver {
    private let model: SegmentsModel
    private let watcher: SegmentWatcher

    init(model: SegmentsModel, watcher: SegmentWatcher) {
        self.model = model
        self.watcher = watcher
        for category in model.categories { _ = track(category) }
    }

    /// Reads `category`'s list while observation is tracked; a change reports it once it is set.
    private func track(_ category: SegmentCategory) -> [Segment] {
        withObservationTracking {
            model.segments(for: category)
        } onChange: { [weak self] in
            // Called as the list is about to change: read it, and track again, once it has.
            DispatchQueue.main.async {
                MainActor.assumeIsolated { self?.changed(category) }
            }
        }
    }

    private func changed(_ category: SegmentCategory) {
        watcher.changed(category, track(category))
    }
}
