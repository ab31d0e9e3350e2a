#!/usr/bin/env python3
"""Checks that .xlsx files are well-formed Office Open XML packages, as a spreadsheet would read them,
with Python's own zipfile and XML parser (no package of ours): the archive (CRCs), every part parses,
every part has a content type, every relationship leads to a part, the workbook's sheets are there,
rows and cells come in order (references where written, else following the one before), numbers are
numbers, every cell's style is one the styles part defines (its number format built in or defined
there), and every chart series refers to cells of an existing sheet and has a line of its own colour. Prints one line per workbook:
  FILE: sheets NAME=ROWSxCOLS,...; charts N; cells N
and exits 1 with the first problem of each broken file.
  check_xlsx.py FILE.xlsx...
"""
import posixpath
import re
import sys
import zipfile
import xml.etree.ElementTree as ET

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
CT = "{http://schemas.openxmlformats.org/package/2006/content-types}"
CHART = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
DRAWING = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


class Broken(Exception):
    pass


def column_number(letters):
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - ord("A") + 1
    return n


def relationships(archive, part):
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", name + ".rels")
    if rels not in archive.namelist():
        return {}
    out = {}
    for rel in ET.fromstring(archive.read(rels)).iter(REL + "Relationship"):
        target = posixpath.normpath(posixpath.join(folder, rel.get("Target")))
        if target not in archive.namelist():
            raise Broken(f"{rels}: {rel.get('Id')} leads to {target}, which is not in the archive")
        out[rel.get("Id")] = target
    return out


BUILTIN_NUMBER_FORMATS = set(range(0, 50))


def cell_styles(archive):
    """The number of cell styles (cellXfs) in xl/styles.xml, each checked for a known number format."""
    styles = ET.fromstring(archive.read("xl/styles.xml"))
    defined = {int(f.get("numFmtId")) for f in styles.iter(MAIN + "numFmt")}
    xfs = styles.find(MAIN + "cellXfs")
    if xfs is None:
        raise Broken("xl/styles.xml: no cellXfs")
    for index, xf in enumerate(xfs.findall(MAIN + "xf")):
        number_format = int(xf.get("numFmtId", "0"))
        if number_format not in BUILTIN_NUMBER_FORMATS and number_format not in defined:
            raise Broken(f"xl/styles.xml: cell style {index} uses number format {number_format}, which is not defined")
    return len(xfs.findall(MAIN + "xf"))


def sheet_cells(archive, part, styles=1):
    """Rows and cells in order, each with a defined style; returns {(row, col): value}."""
    cells = {}
    row_number = 0
    for row in ET.fromstring(archive.read(part)).iter(MAIN + "row"):
        r = row.get("r")
        next_row = int(r) if r else row_number + 1
        if next_row <= row_number:
            raise Broken(f"{part}: row {next_row} after row {row_number}")
        row_number = next_row
        col = 0
        for cell in row.findall(MAIN + "c"):
            ref = cell.get("r")
            if ref:
                match = re.fullmatch(r"([A-Z]+)(\d+)", ref)
                if not match or int(match.group(2)) != row_number:
                    raise Broken(f"{part}: cell {ref} in row {row_number}")
                next_col = column_number(match.group(1))
            else:
                next_col = col + 1
            if next_col <= col or next_col > 16384:
                raise Broken(f"{part}: row {row_number}: column {next_col} after column {col}")
            col = next_col
            if int(cell.get("s", "0")) >= styles:
                raise Broken(f"{part}: row {row_number} column {col}: style {cell.get('s')} of {styles} defined")
            kind = cell.get("t")
            if kind == "inlineStr":
                value = "".join(t.text or "" for t in cell.iter(MAIN + "t"))
            elif kind in (None, "n"):
                v = cell.find(MAIN + "v")
                if v is None:
                    raise Broken(f"{part}: row {row_number} column {col}: a number cell without a value")
                value = float(v.text)
            else:
                raise Broken(f"{part}: row {row_number} column {col}: unexpected cell type {kind}")
            cells[(row_number, col)] = value
    if row_number > 1048576:
        raise Broken(f"{part}: {row_number} rows, more than a sheet holds")
    return cells


def check_chart(archive, part, sheets):
    series = 0
    root = ET.fromstring(archive.read(part))
    for ser in root.iter(CHART + "ser"):
        line = ser.find(CHART + "spPr/" + DRAWING + "ln/" + DRAWING + "solidFill")
        if line is None:
            raise Broken(f"{part}: a series without a line colour (LibreOffice draws no line)")
    for formula in root.iter(CHART + "f"):
        match = re.fullmatch(r"'((?:[^']|'')+)'!\$([A-Z]+)\$(\d+):\$([A-Z]+)\$(\d+)", formula.text or "")
        if not match:
            raise Broken(f"{part}: reference {formula.text!r} is not a quoted sheet and a column range")
        name = match.group(1).replace("''", "'")
        if name not in sheets:
            raise Broken(f"{part}: refers to sheet {name!r}, which the workbook does not have")
        first, last = int(match.group(3)), int(match.group(5))
        cells = sheets[name]
        if first > last or not any(first <= r <= last for (r, _) in cells):
            raise Broken(f"{part}: {formula.text} holds no cell")
        series += 1
    if series == 0:
        raise Broken(f"{part}: a chart without data")


def check(path):
    with zipfile.ZipFile(path) as archive:
        bad = archive.testzip()
        if bad:
            raise Broken(f"member {bad} fails its CRC")
        names = archive.namelist()
        for name in names:
            if name.endswith((".xml", ".rels")):
                try:
                    ET.fromstring(archive.read(name))
                except ET.ParseError as e:
                    raise Broken(f"{name}: not well-formed XML: {e}")
        types = ET.fromstring(archive.read("[Content_Types].xml"))
        defaults = {d.get("Extension") for d in types.iter(CT + "Default")}
        overrides = {o.get("PartName").lstrip("/") for o in types.iter(CT + "Override")}
        for name in names:
            if name not in overrides and name.rsplit(".", 1)[-1] not in defaults:
                raise Broken(f"{name}: no content type")
        for part in overrides:
            if part not in names:
                raise Broken(f"[Content_Types].xml names {part}, which is not in the archive")
        root = relationships(archive, "")
        workbook_part = next(iter(root.values()))
        workbook_rels = relationships(archive, workbook_part)
        styles = cell_styles(archive)
        sheets = {}
        sheet_parts = {}
        for sheet in ET.fromstring(archive.read(workbook_part)).iter(MAIN + "sheet"):
            part = workbook_rels[sheet.get(R_ID)]
            sheets[sheet.get("name")] = sheet_cells(archive, part, styles)
            sheet_parts[sheet.get("name")] = part
        if not sheets:
            raise Broken("a workbook without a sheet")
        charts = 0
        for name, part in sheet_parts.items():
            for drawing in relationships(archive, part).values():
                for chart in relationships(archive, drawing).values():
                    check_chart(archive, chart, sheets)
                    charts += 1
        shapes = []
        for name, cells in sheets.items():
            rows = max((r for r, _ in cells), default=0)
            cols = max((c for _, c in cells), default=0)
            shapes.append(f"{name}={rows}x{cols}")
        total = sum(len(c) for c in sheets.values())
        print(f"{path}: sheets {','.join(shapes)}; charts {charts}; cells {total}")


def main():
    failed = False
    for path in sys.argv[1:]:
        try:
            check(path)
        except (Broken, KeyError, zipfile.BadZipFile, ValueError) as e:
            print(f"{path}: {e}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
