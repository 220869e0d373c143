"""Operations around the flow, not stages of it: re-driving questions without an outcome (``reconcile``), replaying
a sent prompt from its ledger row (``replay``), publishing records and collecting replies (``client``) and the smoke
documents as PDFs (``demo_pdfs``)."""
