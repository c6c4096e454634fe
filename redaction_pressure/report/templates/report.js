// Sort a table by the column whose header was clicked (numbers as numbers), toggling order.
document.querySelectorAll("table.sortable th").forEach(function (header) {
  header.addEventListener("click", function () {
    var table = header.closest("table");
    var body = table.tBodies[0];
    var ascending = header.getAttribute("data-order") !== "ascending";
    table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("data-order"); });
    header.setAttribute("data-order", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    var index = Array.prototype.indexOf.call(header.parentNode.children, header);
    function key(row) {
      var cell = row.cells[index];
      var value = cell.getAttribute("data-sort");
      if (value === null) { value = cell.textContent; }
      var number = parseFloat(value);
      return isNaN(number) ? value : number;
    }
    rows.sort(function (left, right) {
      var a = key(left), b = key(right);
      var order = (typeof a === "number" && typeof b === "number") ? a - b : String(a).localeCompare(String(b));
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});

// A link into a collapsed task (from the task table or the mistakes section) opens it first.
function openTarget() {
  var id = decodeURIComponent(location.hash.slice(1));
  var target = id && document.getElementById(id);
  for (var node = target; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") { node.open = true; }
  }
  if (target) { target.scrollIntoView(); }
}
window.addEventListener("hashchange", openTarget);
openTarget();
