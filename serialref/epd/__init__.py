"""EPD, the Extended Position Description (S. J. Edwards' specification, sections 4-7).

python-chess cannot read the referee's records (``Board.set_epd`` takes every bare word
for a move, so ``refcom respond``, ``cc 000:00:05:00 000:00:04:00`` and ``ptp`` fail)
and ``Board.epd`` quotes every string, so lines are split and written here; boards,
SAN, FEN and legality stay python-chess's.  Where each thing is:

=================  ====================================================================
``record``         :class:`EpdRecord`: the position fields and operations of one line,
                   the typed accessors (``record.move("sm", board)``, ``clock_pair``,
                   ``tag_pairs``...) and the builder ``EpdRecord.from_board``
``operations``     :class:`Operand` and :class:`Operation`, the parts a record is built of
``parser``         ``parse_record`` (strict, the wire) and ``parse_lenient`` (other
                   programs' files), on one tokenizer
``writer``         ``format_record``: the normalised line of spec 7.1
``opcodes``        the opcode syntax and the table of section 6: operand counts,
                   basetypes, integer ranges (``OPCODES["ce"].values``)
``basetypes``      operand -> value for the basetypes of spec 5.2
``clockvalue``     the clock basetype ``DDD:HH:MM:SS`` both ways (``clock_text``)
``position``       the four position fields' syntax (spec 4), and an illegal position's
                   problems in words
``verbs``          the file verbs of section 7 behind ``serialref epd``: normalise,
                   purge, check
=================  ====================================================================

The records of the referee protocol itself (``refcom`` and ``refreq``, section 8) are
built and read one level up, in :mod:`serialref.records`.
"""
