import Foundation
import SegmentsDomain

/// Where a client keeps its state: files in a directory, memory only, or the app's own stores.
///
/// ``SegmentsClient/Options/Storage`` keeps the customer, the segment baseline and the event queue
/// (<doc:Behaviour#P1>); ``AudienceSegmentsClient/Options/VisitorStorage`` keeps visitor segments
/// (<doc:Behaviour#V3>). `Custom` is what the app supplies in the `.custom` case.
public enum SegmentsStorage<Custom: Sendable>: Sendable {
    /// Files in the directory; when `nil`, in the platform's application-support directory, one
    /// folder per integration (on tvOS the caches directory; on Linux `$XDG_DATA_HOME` or
    /// `~/.local/share`).
    ///
    /// Do not give a folder inside an App Group container: the client holds a file lock on its
    /// folder while configured (<doc:Behaviour#P5>), and iOS terminates a suspended app that holds a
    /// file lock in a shared container (termination code `0xdead10cc`).
    case directory(URL?)
    /// Nothing on disk: the state ends with the process.
    case inMemory
    /// The app's own stores.
    case custom(Custom)
}

extension SegmentsStorage where Custom == SegmentsClient.Options.CustomStores {
    /// The app's own customer, baseline and event queue stores.
    public static func custom(
        customer: any CustomerStore, baseline: any SegmentBaselineStore, events: any EventQueueStore
    ) -> Self {
        .custom(Custom(customer: customer, baseline: baseline, events: events))
    }
}
