"""A trace's jobs held as columns: a numpy array per field, a ``Job`` made only when one is asked for.

A ``Job`` tuple costs about 380 bytes (the tuple, its integers, its job id);
a million-job trace held as tuples is most of what the accuracy replay holds.
``JobColumns`` keeps each integer field as one array (int32 when its values
fit, else int64; a field no job has is no array at all), each name field
(user, queue, project, group) as codes into one tuple of the distinct names
(int8, int16 or int32: the narrowest that numbers them; one queue costs a
byte a job), and the job ids as numbers (SWF: a job id is its number written out)
or as one block of text with offsets (PBS). It is a read-only sequence of
``Job``: ``len``, indexing, slicing and iteration give the very tuples a list
would hold, and the accuracy replay reads whole columns (``numbers``,
``name_codes``) without making any.
"""

import sys

import numpy as np

from .trace import Job

__all__ = ["JobColumns", "INTEGER_FIELDS", "NAME_FIELDS", "NONE", "compact", "widened", "integer_arrays",
           "name_columns", "named", "joined"]

NAME_FIELDS = ("user", "queue", "project", "group")
INTEGER_FIELDS = tuple(name for name in Job._fields if name not in NAME_FIELDS and name != "job_id")
_NONE64 = NONE = np.iinfo(np.int64).min
"""Stands for None in an int64 column (no trace time, count or exit status is this)."""
_INT32 = np.iinfo(np.int32)
_CHUNK = 1 << 14
"""Jobs made at a time when iterating: one slice's Python objects at a time."""
_NEW_JOB = tuple.__new__


def compact(values):
    """``values`` (int64, None as ``NONE``) as int32 when they fit (None as int32's minimum); None if all are None.
    An int32 column is kept as it is."""
    if values.dtype == np.int32:
        return values if (values != _INT32.min).any() else None
    known = values != _NONE64
    if not known.any():
        return None
    if int(values[known].min()) > _INT32.min and int(values[known].max()) <= _INT32.max:
        return np.where(known, values, _INT32.min).astype(np.int32)
    return values


_WIDE_FIELDS = frozenset(("submit_time", "start_time", "end_time", "runtime_s"))
"""Kept as int64 when no job lacks them: the replay reads them as int64 arrays, these very ones, not copies."""


def _held(field, column, length):
    if field in _WIDE_FIELDS and column is not None and column.dtype == np.int32 and (column != _INT32.min).all():
        return column.astype(np.int64)
    return column


def widened(column, length):
    """A column (int32, int64, or None: all None) as int64, None as ``NONE``."""
    if column is None:
        return np.full(length, _NONE64, dtype=np.int64)
    if column.dtype == np.int64:
        return column
    return np.where(column != _INT32.min, column.astype(np.int64), _NONE64)


def _none_of(column):
    return _INT32.min if column.dtype == np.int32 else _NONE64


class _NumberIds:
    """Job ids that are their numbers written out (SWF's job number)."""

    def __init__(self, numbers):
        self.numbers = numbers

    def at(self, index):
        return str(int(self.numbers[index]))

    def text(self, begin, end):
        return list(map(str, self.numbers[begin:end].tolist()))

    def part(self, begin, end):
        return _NumberIds(self.numbers[begin:end])

    def taken(self, order):
        return _NumberIds(self.numbers[order])

    def nbytes(self):
        return self.numbers.nbytes


class _TextIds:
    """Job ids in one block of UTF-8 text: job ``i``'s is ``text[starts[i]:ends[i]]``."""

    def __init__(self, text, starts, ends):
        self.text_bytes, self.starts, self.ends = text, starts, ends

    @classmethod
    def of(cls, job_ids):
        encoded = [job_id.encode("utf-8") for job_id in job_ids]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
        return cls(b"".join(encoded), offsets[:-1], offsets[1:])

    def at(self, index):
        return self.text_bytes[int(self.starts[index]):int(self.ends[index])].decode("utf-8")

    def text(self, begin, end):
        data = self.text_bytes
        return [data[low:high].decode("utf-8")
                for low, high in zip(self.starts[begin:end].tolist(), self.ends[begin:end].tolist())]

    def part(self, begin, end):
        return _TextIds(self.text_bytes, self.starts[begin:end], self.ends[begin:end])

    def taken(self, order):
        return _TextIds(self.text_bytes, self.starts[order], self.ends[order])

    def nbytes(self):
        return len(self.text_bytes) + self.starts.nbytes + self.ends.nbytes


class JobColumns:
    """Jobs as columns; a read-only sequence of ``Job`` (module docstring).

    ``integers``: field -> int32/int64 array (None: no job has the field),
    None written as the dtype's minimum; ``names``: field -> ``(codes, names)``,
    codes (signed integers) index the tuple ``names``, -1 for None (None: no
    job has the field).
    """

    def __init__(self, length, ids, integers, names):
        self._length = length
        self._ids = ids
        self._integers = integers
        self._names = names

    @classmethod
    def of_arrays(cls, ids, integers, names):
        """From job numbers (int64), job id strings, or ``(text, starts, ends)``: job ``i``'s id is UTF-8
        ``text[starts[i]:ends[i]]``; int64 columns with ``NONE`` for None (or None), and ``(codes, names)`` pairs
        (or None)."""
        if isinstance(ids, np.ndarray):
            ids = _NumberIds(compact(ids) if len(ids) else ids)
        else:
            ids = _TextIds(*ids) if isinstance(ids, tuple) else _TextIds.of(ids)
        length = len(ids.starts) if isinstance(ids, _TextIds) else len(ids.numbers)
        integers = {field: None if values is None else _held(field, compact(values), length)
                    for field, values in integers.items()}
        names = {field: None if coded is None else (_narrowest(coded[0], len(coded[1])), coded[1])
                 for field, coded in names.items()}
        return cls(length, ids, integers, names)

    @classmethod
    def of_jobs(cls, jobs):
        """The columns of a list of ``Job``; None if a field holds what a column cannot (not an int, out of int64,
        a job id not a str)."""
        integers = integer_arrays(jobs)
        job_ids = [job.job_id for job in jobs]
        if integers is None or any(type(job_id) is not str for job_id in job_ids):
            return None
        return cls.of_arrays(job_ids, integers, name_columns(jobs))

    def __len__(self):
        return self._length

    def __getitem__(self, index):
        if isinstance(index, slice):
            begin, end, step = index.indices(self._length)
            if step != 1:
                return list(self)[index]
            return self._part(begin, max(begin, end))
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("job index out of range")
        return self._jobs(index, index + 1)[0]

    def __eq__(self, other):
        if isinstance(other, (list, JobColumns)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return repr(list(self))

    def __iter__(self):
        for begin in range(0, self._length, _CHUNK):
            yield from self._jobs(begin, min(begin + _CHUNK, self._length))

    def _part(self, begin, end):
        integers = {field: None if values is None else values[begin:end] for field, values in self._integers.items()}
        names = {field: None if coded is None else (coded[0][begin:end], coded[1])
                 for field, coded in self._names.items()}
        return JobColumns(end - begin, self._ids.part(begin, end), integers, names)

    def taken(self, order):
        """The jobs at the indexes of ``order`` (an int array), in that order, as columns: a column is copied
        once, the job ids' text and the names are shared."""
        integers = {field: None if values is None else values[order] for field, values in self._integers.items()}
        names = {field: None if coded is None else (coded[0][order], coded[1]) for field, coded in self._names.items()}
        return JobColumns(len(order), self._ids.taken(order), integers, names)

    def narrowed(self, keep=("submit_time",)):
        """The same jobs with every int64 column but those of ``keep`` held as int32 where its values fit (the
        wide columns serve the accuracy replay; a simulation reads them as ``Job``s, the same numbers)."""
        integers = {field: values if values is None or field in keep else compact(values)
                    for field, values in self._integers.items()}
        return JobColumns(self._length, self._ids, integers, self._names)

    def made(self, begin, end):
        """The ``Job``s ``begin`` to ``end`` as a list (slices of every column at once: the quick way to make
        many)."""
        return self._jobs(begin, end)

    def _jobs(self, begin, end):
        count = end - begin
        fields = []
        for field in Job._fields:
            if field == "job_id":
                fields.append(self._ids.text(begin, end))
            elif field in NAME_FIELDS:
                fields.append(_names_of(self._names[field], begin, end, count))
            else:
                fields.append(_integers_of(self._integers[field], begin, end, count))
        return [_NEW_JOB(Job, values) for values in zip(*fields)]

    def job_id(self, index):
        """The job id of job ``index``."""
        return self._ids.at(index)

    def job_ids(self):
        """Every job id, in order, made a slice at a time."""
        for begin in range(0, self._length, _CHUNK):
            yield from self._ids.text(begin, min(begin + _CHUNK, self._length))

    def job_numbers(self):
        """The job ids as int64 numbers when every job id is its number written out (SWF); else None."""
        return self._ids.numbers.astype(np.int64) if isinstance(self._ids, _NumberIds) else None

    def has_values(self, field):
        """Whether some job has a value (not None) in integer ``field``."""
        return self._integers[field] is not None

    def first_missing(self, field):
        """The index of the first job whose integer ``field`` is None, or None if every job has one."""
        column = self._integers[field]
        if column is None:
            return 0 if self._length else None
        missing = np.flatnonzero(column == _none_of(column))
        return int(missing[0]) if missing.size else None

    def numbers(self, field, missing=None):
        """Integer ``field`` of every job as int64 (the column itself when it is one: read only); ``missing``
        stands for None (None: ``ValueError`` if a job has none)."""
        column = self._integers[field]
        if column is None:
            column = np.full(self._length, _NONE64, dtype=np.int64)
        unknown = column == _none_of(column)
        if unknown.any():
            if missing is None:
                raise ValueError("{}: no value for job {}".format(field, self.job_id(int(np.argmax(unknown)))))
            return np.where(unknown, np.int64(missing), column.astype(np.int64))  # missing may not fit int32
        return column.astype(np.int64, copy=False)  # a wide column itself: no copy

    def name_codes(self, field):
        """``(codes, names)`` of name ``field``: indexes (signed integers) into the tuple ``names``, -1 for None."""
        coded = self._names[field]
        if coded is None:
            return np.full(self._length, -1, dtype=np.int32), ()
        return coded

    def nbytes(self):
        """Bytes of the arrays and texts held (the names' few strings left out)."""
        arrays = [values for values in self._integers.values() if values is not None]
        arrays += [coded[0] for coded in self._names.values() if coded is not None]
        return self._ids.nbytes() + sum(array.nbytes for array in arrays)


def _narrowest(codes, count):
    """``codes`` of ``count`` names (and -1) in the narrowest signed integer type that holds them."""
    for code_type in (np.int8, np.int16):
        if count <= np.iinfo(code_type).max:
            return codes.astype(code_type, copy=False)
    return codes


def integer_arrays(jobs):
    """Field -> int64 array (None as ``NONE``) of the integer fields of ``jobs``; None if a value is not an int
    or is out of int64."""
    integers = {}
    for field in INTEGER_FIELDS:
        index = Job._fields.index(field)
        values = [job[index] for job in jobs]
        if any(type(value) is not int for value in values if value is not None):
            return None
        try:
            column = np.fromiter(map({None: _NONE64}.get, values, values), np.int64, len(values))
        except OverflowError:
            return None
        if int((column == _NONE64).sum()) != values.count(None):
            return None
        integers[field] = column
    return integers


def name_columns(jobs):
    """Field -> ``(codes, names)`` (or None) of the name fields of ``jobs``."""
    return {field: _coded([job[Job._fields.index(field)] for job in jobs]) for field in NAME_FIELDS}


_DENSE_SPAN = 1 << 20
"""Numbers spanning at most this many values are told apart by a table over the span, not by sorting them."""


def named(numbers, name):
    """``(codes, names)`` of int64 ``numbers``, each named ``name(number)`` (None: -1), each name made once."""
    distinct, codes = _distinct(numbers)
    lookup = [name(number) for number in distinct.tolist()]
    return _merged(codes, lookup)


def _distinct(numbers):
    """``np.unique(numbers, return_inverse=True)`` of an int64 array; a trace's user, group and queue numbers span
    a few thousand values, which a table over the span numbers in linear time."""
    if len(numbers):
        low = int(numbers.min())
        span = int(numbers.max()) - low + 1
        if span <= _DENSE_SPAN:
            offsets = numbers - low
            present = np.zeros(span, dtype=bool)
            present[offsets] = True
            rank = np.cumsum(present) - 1
            return np.flatnonzero(present) + low, rank[offsets]
    distinct, codes = np.unique(numbers, return_inverse=True)
    return distinct, codes.reshape(-1)


def _numbered(values):
    """Name -> code in order of first appearance among ``values``, None -> -1."""
    numbers = {None: -1}
    for value in values:
        if value not in numbers:
            numbers[value] = len(numbers) - 1
    return numbers


def _merged(codes, lookup):
    """``(codes, names)``: ``lookup[codes]``, equal names one code, None -1; None if every one is None."""
    numbers = _numbered(lookup)
    if len(numbers) == 1:
        return None
    remap = np.array([numbers[value] for value in lookup] or [-1], dtype=np.int32)
    return remap[codes], tuple(sys.intern(value) for value in list(numbers)[1:])


def joined(parts, order):
    """One name column of ``parts`` (``(rows, (codes, names) or None)``) one after the other, rows taken in
    ``order``."""
    lookup, codes = [], []
    for rows, coded in parts:
        if coded is None:
            codes.append(np.full(rows, -1, dtype=np.int64))
        else:
            codes.append(np.where(coded[0] >= 0, coded[0].astype(np.int64) + len(lookup), -1))
            lookup += coded[1]
    every = np.concatenate(codes)[order]
    return _merged(np.where(every >= 0, every, len(lookup)), lookup + [None])


def _coded(values):
    """``(codes, names)`` of a list of names (None: -1), the names interned; None if every value is None."""
    numbers = _numbered(values)
    if len(numbers) == 1:
        return None
    names = tuple(sys.intern(name) for name in list(numbers)[1:])
    return np.fromiter(map(numbers.__getitem__, values), np.int32, len(values)), names


def _names_of(coded, begin, end, count):
    if coded is None:
        return [None] * count
    codes, names = coded
    lookup = names + (None,)  # code -1 is the last entry: None
    return [lookup[code] for code in codes[begin:end].tolist()]


def _integers_of(column, begin, end, count):
    if column is None:
        return [None] * count
    part, none = column[begin:end], _none_of(column)
    values = part.tolist()
    if not (part == none).any():  # a column with no None in this slice (most are): no loop over the values
        return values
    return [None if value == none else value for value in values]
