// The facade (SegmentsClient, Exponea.shared) arrives with the facade issue (#5).
import SegmentsDomain
