import SegmentsDomain

/// The log lines of the segmentation engine that apps and support teams search for, word for word
/// (<doc:Behaviour#L1>): each of these is written once, here, for the engine and its machine.
///
/// Not every `Segments:` line is here. ``SegmentationStateMachine`` writes two lines inline — the
/// warning that a stored customer had an empty cookie, and the verbose "Segments: Segments
/// fetched; changed categories: […]" — and the storage, the backend adapters, audience and visitor
/// segments write their own lines where they log them.
enum SegmentsLogText {
    /// Logged when the customer file, unreadable before the device's first unlock, is read at last
    /// and its customer replaces the one made meanwhile (<doc:Behaviour#P8>).
    static let storedCustomerAdopted =
        "Segments: The stored customer could be read once protected data became available; it replaces the customer made while it could not be read"
    static let initialSkippedNoCallback = "Segments: Skipping initial segments update process for no callback"
    static let initialSkippedNotRequired = "Segments: Skipping initial segments update process as is not required"
    static let trackedSkippedNoCallback =
        "Segments: Skipping segments update process after tracked event due to no callback registered"
    static let reloadSkippedNoCallback = "Segments: Skipping segments reload process for no callback"
    /// The reload came due with no usable network path; it starts when the path returns (<doc:Behaviour#N1>).
    static let reloadWaitsForPath = "Segments: No usable network path; the segments reload waits for the network"
    static let cancelledCustomerChanged = "Segments: Check process was canceled because customer has changed"
    static let ignoredDifferentCustomer = "Segments: New data are ignored because were loaded for different customer"
    static let cancelledMeanwhile = "Segments: Segments change check has been cancelled meanwhile"
    static let baselineOfAnotherIntegration =
        "Segments: The stored segments belong to another integration of the same storage; they are not used"
    static let flushingNotImmediate =
        "Segments: Segment accuracy needs the immediate flushing mode: events tracked in other modes reach the server late"

    /// A stop before the first configure forgets the calls made before it (<doc:Behaviour#E1>).
    static func waitingCallsDropped(_ count: Int) -> String {
        "Tracking: Stopped with \(count) tracking call(s) waiting for configure; they were dropped"
    }

    /// A call made before the first configure, refused: ``WaitingCalls/capacity`` wait already
    /// (<doc:Behaviour#E1>).
    static func waitingCallRefused(_ call: String) -> String {
        "Tracking: \(call) refused: \(WaitingCalls.capacity) calls made before configure wait already"
    }

    /// The link failure line: ids appear only when the logger writes verbose lines
    /// (<doc:Behaviour#P4>).
    static func linkFailed(_ customer: CustomerIds, verbose: Bool) -> String {
        let ids = verbose ? CustomerIds(customer.hardIds).description : CustomerIds(customer.hardIds).keyDescription
        return "Segments: Customer IDs \(ids) merge failed, unable to fetch segments"
    }

    static func fetchFailed(_ error: SegmentsError) -> String {
        "Segments: Fetch of segments failed: \(error)"
    }
}
